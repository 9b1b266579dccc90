/* SPDX-License-Identifier: BSD-3-Clause */
/* BAL problems: sbm_bal_read (plain and bzip2), sbm_bal_write, sbm_bal_generate,
 * sbm_bal_evaluate.
 *
 * The real files in tests/data/bal are checked against values read here with sscanf (header,
 * first and last observation, first and last parameter); both are round-tripped through the
 * writer (plain and .bz2) bitwise. Malformed files check every error path by status and by the
 * "file:line" in the message. */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------- */
/* Temporary files                                                                          */
/* ---------------------------------------------------------------------------------------- */

static int file_exists(const char *p) { return access(p, F_OK) == 0; }

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static void assert_same_problem(const sbm_bal_problem *a, const sbm_bal_problem *b)
{
    sbm_bal_info x = sbm_bal_get_info(a), y = sbm_bal_get_info(b);
    assert_int_equal(x.cameras, y.cameras);
    assert_int_equal(x.points, y.points);
    assert_int_equal(x.observations, y.observations);
    assert_memory_equal(x.obs_camera, y.obs_camera, (size_t)x.observations * sizeof(int32_t));
    assert_memory_equal(x.obs_point, y.obs_point, (size_t)x.observations * sizeof(int32_t));
    assert_memory_equal(x.obs_xy, y.obs_xy, (size_t)x.observations * 2 * sizeof(double));
    assert_memory_equal(x.camera_params, y.camera_params, (size_t)x.cameras * 9 * sizeof(double));
    assert_memory_equal(x.point_params, y.point_params, (size_t)x.points * 3 * sizeof(double));
}

/* Last non-empty line of a plain or compressed file. */
static double last_value(const char *path)
{
    FILE *f = sbm_test_open_plain(path);
    char line[256];
    double v = NAN;
    while (fgets(line, sizeof line, f))
        if (line[0] != '\n') v = strtod(line, NULL);
    fclose(f);
    return v;
}

/* ---------------------------------------------------------------------------------------- */
/* Real files                                                                               */
/* ---------------------------------------------------------------------------------------- */

static void test_read_ladybug(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const char *path = sbm_test_data_path("bal/problem-49-7776-pre.txt");
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_read(e->ctx, path, &p));
    sbm_bal_info info = sbm_bal_get_info(p);
    assert_int_equal(info.cameras, 49);
    assert_int_equal(info.points, 7776);
    assert_int_equal(info.observations, 31843);

    /* independent parse (decompressed by zlib/libbz2 here) of the header, the first observation
     * line, the first parameter and the last value */
    FILE *f = sbm_test_open_plain(path);
    long nc, np, no, c0, p0;
    double x0, y0, par0;
    assert_int_equal(fscanf(f, "%ld %ld %ld %ld %ld %lf %lf", &nc, &np, &no, &c0, &p0, &x0, &y0), 7);
    for (long k = 1; k < no; k++) {
        long c, q;
        double x, y;
        assert_int_equal(fscanf(f, "%ld %ld %lf %lf", &c, &q, &x, &y), 4);
        if (k == no - 1) {
            assert_int_equal(info.obs_camera[k], c);
            assert_int_equal(info.obs_point[k], q);
            assert_true(info.obs_xy[2 * k] == x && info.obs_xy[2 * k + 1] == y);
        }
    }
    assert_int_equal(fscanf(f, "%lf", &par0), 1);
    fclose(f);
    assert_int_equal(info.obs_camera[0], c0);
    assert_int_equal(info.obs_point[0], p0);
    assert_true(info.obs_xy[0] == x0 && info.obs_xy[1] == y0);
    assert_true(info.camera_params[0] == par0);
    assert_true(info.point_params[3 * 7776 - 1] == last_value(path));

    /* every point of the real file is seen by at least two cameras (V's blocks are SPD) */
    int *seen = calloc(7776, sizeof(int));
    for (int64_t k = 0; k < info.observations; k++) seen[info.obs_point[k]]++;
    for (int j = 0; j < 7776; j++) assert_true(seen[j] >= 2);
    free(seen);

    double cost = 0.0;
    SBM_ASSERT_OK(e->ctx, sbm_bal_evaluate(e->ctx, p, NULL, &cost));
    assert_true(cost > 8.0e5 && cost < 9.0e5); /* 8.509e5 at the file's initial parameters */

    /* round trips: plain and bzip2 */
    const char *plain = sbm_test_tmp_path("ladybug.txt"), *bz = sbm_test_tmp_path("ladybug.txt.bz2");
    SBM_ASSERT_OK(e->ctx, sbm_bal_write(e->ctx, plain, p));
    SBM_ASSERT_OK(e->ctx, sbm_bal_write(e->ctx, bz, p));
    sbm_bal_problem *q = NULL, *r = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_read(e->ctx, plain, &q));
    SBM_ASSERT_OK(e->ctx, sbm_bal_read(e->ctx, bz, &r));
    assert_same_problem(p, q);
    assert_same_problem(p, r);
    sbm_bal_destroy(q);
    sbm_bal_destroy(r);
    sbm_bal_destroy(p);
    unlink(plain);
    unlink(bz);
}

static void test_read_trafalgar_bz2(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const char *path = sbm_test_data_path("bal/problem-21-11315-pre.txt.bz2");
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_read(e->ctx, path, &p));
    sbm_bal_info info = sbm_bal_get_info(p);
    assert_int_equal(info.cameras, 21);
    assert_int_equal(info.points, 11315);
    assert_int_equal(info.observations, 36455);
    /* the first observation line is "0 0     1.597070e+03 4.733700e+02" */
    assert_int_equal(info.obs_camera[0], 0);
    assert_int_equal(info.obs_point[0], 0);
    assert_true(info.obs_xy[0] == 1.597070e+03 && info.obs_xy[1] == 4.733700e+02);

    /* the decompressed text (zlib/libbz2 here, not sbm) reads to the same problem */
    const char *plain = sbm_test_tmp_path("trafalgar.txt");
    sbm_test_recode(path, plain, "plain");
    sbm_bal_problem *q = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_read(e->ctx, plain, &q));
    assert_same_problem(p, q);
    assert_true(info.point_params[3 * 11315 - 1] == last_value(plain));
    sbm_bal_destroy(q);
    /* two bzip2 streams back to back (as pbzip2 writes) read as their concatenation */
    const char *half1 = sbm_test_tmp_path("h1.txt"), *half2 = sbm_test_tmp_path("h2.txt");
    const char *z1 = sbm_test_tmp_path("h1.txt.bz2"), *z2 = sbm_test_tmp_path("h2.txt.bz2");
    const char *cat = sbm_test_tmp_path("cat.txt.bz2");
    FILE *in = fopen(plain, "rb"), *o1 = fopen(half1, "wb"), *o2 = fopen(half2, "wb");
    assert_true(in && o1 && o2);
    int ch;
    for (long k = 0; (ch = fgetc(in)) != EOF; k++) fputc(ch, k < 100000 ? o1 : o2);
    fclose(in);
    assert_int_equal(fclose(o1), 0);
    assert_int_equal(fclose(o2), 0);
    sbm_test_recode(half1, z1, "bz2");
    sbm_test_recode(half2, z2, "bz2");
    FILE *oc = fopen(cat, "wb");
    assert_non_null(oc);
    for (int h = 0; h < 2; h++) {
        FILE *z = fopen(h == 0 ? z1 : z2, "rb");
        assert_non_null(z);
        while ((ch = fgetc(z)) != EOF) fputc(ch, oc);
        fclose(z);
    }
    assert_int_equal(fclose(oc), 0);
    SBM_ASSERT_OK(e->ctx, sbm_bal_read(e->ctx, cat, &q));
    assert_same_problem(p, q);
    sbm_bal_destroy(q);
    unlink(half1);
    unlink(half2);
    unlink(z1);
    unlink(z2);
    unlink(cat);
    unlink(plain);
    sbm_bal_destroy(p);
}

/* ---------------------------------------------------------------------------------------- */
/* Small files                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* 2 cameras, 2 points, 3 observations; parameters several per line */
static const char *const tiny =
    "2 2 3\n"
    "0 0 1.5 -2.5\n"
    "1 0 3 4\r\n"
    "1 1 -1e2 2E1\n"
    "0.01 0.02 0.03 0 0 -5 500 0 0\n"
    "0.0 0.0 0.1\n0\n0\n-6\n400\n0.1\n-0.01\n"
    "0.1 0.2 0.3\n"
    "-0.1 -0.2 0.25";

static void test_read_tiny(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const char *path = sbm_test_write_text("tiny.txt", tiny);
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_read(e->ctx, path, &p));
    sbm_bal_info i = sbm_bal_get_info(p);
    assert_int_equal(i.cameras, 2);
    assert_int_equal(i.points, 2);
    assert_int_equal(i.observations, 3);
    const int32_t cams[3] = {0, 1, 1}, pts[3] = {0, 0, 1};
    const double xy[6] = {1.5, -2.5, 3, 4, -100, 20};
    const double cp[18] = {0.01, 0.02, 0.03, 0, 0, -5, 500, 0, 0, 0, 0, 0.1, 0, 0, -6, 400, 0.1, -0.01};
    const double pp[6] = {0.1, 0.2, 0.3, -0.1, -0.2, 0.25};
    assert_memory_equal(i.obs_camera, cams, sizeof cams);
    assert_memory_equal(i.obs_point, pts, sizeof pts);
    assert_memory_equal(i.obs_xy, xy, sizeof xy);
    assert_memory_equal(i.camera_params, cp, sizeof cp);
    assert_memory_equal(i.point_params, pp, sizeof pp);

    /* residuals against the model written out here */
    double r[6], cost;
    SBM_ASSERT_OK(e->ctx, sbm_bal_evaluate(e->ctx, p, r, &cost));
    double want = 0.0;
    for (int k = 0; k < 3; k++) {
        const double *c = cp + 9 * cams[k], *X = pp + 3 * pts[k];
        /* rotation by Rodrigues' formula, computed independently */
        const double th = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
        double P[3];
        if (th > 0) {
            const double kx = c[0] / th, ky = c[1] / th, kz = c[2] / th;
            const double ct = cos(th), st = sin(th), kd = kx * X[0] + ky * X[1] + kz * X[2];
            const double cr[3] = {ky * X[2] - kz * X[1], kz * X[0] - kx * X[2], kx * X[1] - ky * X[0]};
            const double kk[3] = {kx, ky, kz};
            for (int a = 0; a < 3; a++) P[a] = X[a] * ct + cr[a] * st + kk[a] * kd * (1 - ct) + c[3 + a];
        } else {
            for (int a = 0; a < 3; a++) P[a] = X[a] + c[3 + a];
        }
        const double px = -P[0] / P[2], py = -P[1] / P[2], r2 = px * px + py * py;
        const double rho = 1 + c[7] * r2 + c[8] * r2 * r2;
        const double rx = c[6] * rho * px - xy[2 * k], ry = c[6] * rho * py - xy[2 * k + 1];
        assert_true(fabs(r[2 * k] - rx) <= 1e-12 * (1 + fabs(rx)));
        assert_true(fabs(r[2 * k + 1] - ry) <= 1e-12 * (1 + fabs(ry)));
        want += rx * rx + ry * ry;
    }
    assert_true(fabs(cost - 0.5 * want) <= 1e-12 * want);
    double cost_only;
    SBM_ASSERT_OK(e->ctx, sbm_bal_evaluate(e->ctx, p, NULL, &cost_only));
    assert_true(cost_only == cost);
    sbm_bal_destroy(p);

    /* an empty problem is valid */
    path = sbm_test_write_text("empty.txt", "0 0 0\n");
    SBM_ASSERT_OK(e->ctx, sbm_bal_read(e->ctx, path, &p));
    assert_int_equal(sbm_bal_get_info(p).observations, 0);
    SBM_ASSERT_OK(e->ctx, sbm_bal_evaluate(e->ctx, p, NULL, &cost));
    assert_true(cost == 0.0);
    sbm_bal_destroy(p);
}

typedef struct bad_case {
    const char *text;   /* file contents */
    const char *where;  /* expected ":line:" */
    const char *reason; /* expected substring */
} bad_case;

static void test_read_malformed(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const bad_case cases[] = {
        {"", ":1:", "ends before the camera count"},
        {"2 x 3\n", ":1:", "the point count: 'x' is not an integer"},
        {"-1 2 3\n", ":1:", "out of range"},
        {"1 1\n", ":1:", "ends before the observation count"},
        {"99999999999 1 1\n", ":1:", "the camera count"},
        {"1 1 1\n0 1 1.0 2.0\n", ":2:", "point index 1 is out of range"},
        {"1 1 1\n3 0 1.0 2.0\n", ":2:", "camera index 3 is out of range"},
        {"1 1 2\n0 0 1.0 2.0\n", ":2:", "ends before observation 2 of 2"},
        {"1 1 1\n0 0 1.0 zz\n", ":2:", "observation 1 of 1: y: 'zz' is not a number"},
        {"1 1 1\n0 0 1.0 nan\n", ":2:", "not finite"},
        {"1 1 1\n0 0 1.0 2.0\n1\n2\n3\n4\n5\n6\n7\n8\n", ":10:", "parameter 9 of camera 0"},
        {"1 1 1\n0 0 1 2\n1 2 3 4 5 6 7 8 9\n1 2\n", ":4:", "coordinate 3 of point 0"},
        {"1 1 1\n0 0 1 2\n1 2 3 4 5 6 7 8 9\n1 2 inf\n", ":4:", "coordinate 3 of point 0"},
        {"1 1 1\n0 0 1 2\n1 2 3 4 5 6 7 8 9\n1 2 3\n\n4\n", ":6:", "unexpected '4' after the last point"},
        {"1 1 1\n0 0.5 1 2\n", ":2:", "the point index: '0.5' is not an integer"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char name[32];
        snprintf(name, sizeof name, "bad%zu.txt", k);
        const char *path = sbm_test_write_text(name, cases[k].text);
        sbm_bal_problem *p = (sbm_bal_problem *)&cases[k]; /* must be set to NULL */
        char where[64];
        snprintf(where, sizeof where, "%s%s", name, cases[k].where);
        SBM_ASSERT_FAILS(e->ctx, sbm_bal_read(e->ctx, path, &p), SBM_ERR_PARSE, where);
        SBM_ASSERT_FAILS(e->ctx, sbm_bal_read(e->ctx, path, &p), SBM_ERR_PARSE, cases[k].reason);
        assert_null(p);
        /* the message names the call */
        assert_non_null(strstr(sbm_ctx_last_error(e->ctx), "sbm_bal_read: "));
    }
    /* the same errors through bzip2 and gzip */
    const char *plain = sbm_test_write_text("badz.txt", "1 1 1\n0 0 1.0 2.0\n1\n");
    sbm_test_recode(plain, sbm_test_tmp_path("badz.txt.bz2"), "bz2");
    sbm_test_recode(plain, sbm_test_tmp_path("badz.txt.gz"), "gz");
    {
        sbm_bal_problem *p = NULL;
        SBM_ASSERT_FAILS(e->ctx, sbm_bal_read(e->ctx, sbm_test_tmp_path("badz.txt.bz2"), &p), SBM_ERR_PARSE,
                         "badz.txt.bz2:3: the file ends before parameter 2 of camera 0");
        SBM_ASSERT_FAILS(e->ctx, sbm_bal_read(e->ctx, sbm_test_tmp_path("badz.txt.gz"), &p), SBM_ERR_PARSE,
                         "badz.txt.gz:3: the file ends before parameter 2 of camera 0");
    }
    /* I/O: missing file, a directory, corrupt bzip2 data */
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_read(e->ctx, sbm_test_tmp_path("nonexistent.txt"), &p), SBM_ERR_IO,
                     "nonexistent.txt: cannot open");
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_read(e->ctx, sbm_test_tmp_dir, &p), SBM_ERR_IO, sbm_test_tmp_dir);
    const char *corrupt = sbm_test_write_text("corrupt.txt.bz2", "BZh91AY&SYgarbage garbage garbage");
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_read(e->ctx, corrupt, &p), SBM_ERR_IO, "corrupt.txt.bz2");
    assert_null(p);
    /* arguments */
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_read(e->ctx, NULL, &p), SBM_ERR_NULL_ARGUMENT, "path");
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_read(e->ctx, corrupt, NULL), SBM_ERR_NULL_ARGUMENT, "problem");
    assert_int_equal(sbm_bal_read(NULL, corrupt, &p), SBM_ERR_NULL_ARGUMENT);
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_evaluate(e->ctx, NULL, NULL, NULL), SBM_ERR_NULL_ARGUMENT,
                     "problem");
}

static void test_write_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_read(e->ctx, sbm_test_write_text("w.txt", tiny), &p));
    const char *bad = sbm_test_tmp_path("no/such/dir/out.txt");
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_write(e->ctx, bad, p), SBM_ERR_IO, "out.txt");
    assert_false(file_exists(bad));
    /* a non-finite parameter is refused and no file appears */
    sbm_bal_info i = sbm_bal_get_info(p);
    const double keep = i.point_params[4];
    i.point_params[4] = NAN;
    const char *out = sbm_test_tmp_path("nan.txt");
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_write(e->ctx, out, p), SBM_ERR_NOT_FINITE,
                     "coordinate 2 of point 1");
    assert_false(file_exists(out));
    i.point_params[4] = keep;
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_write(e->ctx, NULL, p), SBM_ERR_NULL_ARGUMENT, "path");
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_write(e->ctx, out, NULL), SBM_ERR_NULL_ARGUMENT, "problem");
    sbm_bal_destroy(p);
    sbm_bal_destroy(NULL);
    sbm_bal_info z = sbm_bal_get_info(NULL);
    assert_int_equal(z.cameras, 0);
    assert_null(z.camera_params);
}

/* ---------------------------------------------------------------------------------------- */
/* Generator                                                                                */
/* ---------------------------------------------------------------------------------------- */

static void test_generate(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_generate_options o = sbm_bal_generate_defaults(3, 7, 2, 42);
    sbm_bal_problem *a = NULL, *b = NULL, *c = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &o, &a));
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &o, &b));
    assert_same_problem(a, b); /* seeded: bitwise reproducible */
    sbm_bal_info i = sbm_bal_get_info(a);
    assert_int_equal(i.cameras, 3);
    assert_int_equal(i.points, 7);
    assert_int_equal(i.observations, 14);
    for (int64_t k = 0; k < i.observations; k++) {
        assert_int_equal(i.obs_point[k], k / 2);
        if (k % 2) assert_true(i.obs_camera[k] > i.obs_camera[k - 1]); /* distinct, increasing */
    }
    /* every observation in front of its camera (P.z < 0) */
    for (int64_t k = 0; k < i.observations; k++) {
        const double *cam = i.camera_params + 9 * i.obs_camera[k], *X = i.point_params + 3 * i.obs_point[k];
        const double th = sqrt(cam[0] * cam[0] + cam[1] * cam[1] + cam[2] * cam[2]);
        const double kz[3] = {cam[0] / th, cam[1] / th, cam[2] / th};
        const double kd = kz[0] * X[0] + kz[1] * X[1] + kz[2] * X[2];
        const double crz = kz[0] * X[1] - kz[1] * X[0];
        const double Pz = X[2] * cos(th) + crz * sin(th) + kz[2] * kd * (1 - cos(th)) + cam[5];
        assert_true(Pz < -1.0);
    }
    /* another seed differs; noise 0 and perturbation 0 give a zero cost */
    o.seed = 43;
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &o, &c));
    assert_memory_not_equal(sbm_bal_get_info(c).obs_xy, i.obs_xy, 28 * sizeof(double));
    sbm_bal_destroy(c);
    o.pixel_noise = 0.0;
    o.perturbation = 0.0;
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &o, &c));
    double cost;
    SBM_ASSERT_OK(e->ctx, sbm_bal_evaluate(e->ctx, c, NULL, &cost));
    assert_true(cost < 1e-20);
    sbm_bal_destroy(c);
    /* a larger one: a perturbed start costs much more than the noise floor */
    sbm_bal_generate_options big = sbm_bal_generate_defaults(20, 500, 4, 7);
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &big, &c));
    SBM_ASSERT_OK(e->ctx, sbm_bal_evaluate(e->ctx, c, NULL, &cost));
    assert_true(cost > 20.0 * 0.5 * 0.25 * 2 * 2000); /* 20x the noise floor */
    /* write + read is bitwise */
    const char *path = sbm_test_tmp_path("gen.txt");
    SBM_ASSERT_OK(e->ctx, sbm_bal_write(e->ctx, path, c));
    sbm_bal_problem *d = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_read(e->ctx, path, &d));
    assert_same_problem(c, d);
    sbm_bal_destroy(d);
    sbm_bal_destroy(c);
    sbm_bal_destroy(b);
    sbm_bal_destroy(a);

    /* argument errors */
    sbm_bal_problem *p = (sbm_bal_problem *)&o;
    o = sbm_bal_generate_defaults(1, 7, 2, 1);
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_generate(e->ctx, &o, &p), SBM_ERR_INVALID_ARGUMENT, "cameras = 1");
    assert_null(p);
    o = sbm_bal_generate_defaults(3, 0, 2, 1);
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_generate(e->ctx, &o, &p), SBM_ERR_INVALID_ARGUMENT, "points = 0");
    o = sbm_bal_generate_defaults(3, 7, 4, 1);
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_generate(e->ctx, &o, &p), SBM_ERR_INVALID_ARGUMENT,
                     "obs_per_point = 4");
    o = sbm_bal_generate_defaults(3, 7, 2, 1);
    o.pixel_noise = -1;
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_generate(e->ctx, &o, &p), SBM_ERR_INVALID_ARGUMENT, "pixel_noise");
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_generate(e->ctx, NULL, &p), SBM_ERR_NULL_ARGUMENT, "options");
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_generate(e->ctx, &o, NULL), SBM_ERR_NULL_ARGUMENT, "problem");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_read_ladybug),  SBM_TEST_BOTH(test_read_trafalgar_bz2),
        SBM_TEST_BOTH(test_read_tiny),     SBM_TEST_BOTH(test_read_malformed),
        SBM_TEST_BOTH(test_write_errors),  SBM_TEST_BOTH(test_generate),
    };
    return cmocka_run_group_tests(tests, sbm_test_make_tmp_dir, sbm_test_remove_tmp_dir);
}
