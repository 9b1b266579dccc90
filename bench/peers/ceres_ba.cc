/* SPDX-License-Identifier: BSD-3-Clause */
// ceres-ba: native Ceres peer of `sbm ba-solve` (a benchmark program, not a test).
//
//   ceres-ba --bal FILE [--threads T] [--iterations N] [--function-tolerance X]
//            [--gradient-tolerance X] [--parameter-tolerance X] [--initial-lambda X]
//            [--loss none|huber:A|cauchy:A] [--linear-solver sparse-schur|iterative-schur]
//            [--verbose]
//
// Reads a BAL problem (plain or .bz2: the file sbm reads, e.g. one written by `sbm bal-generate`)
// and solves it with Levenberg-Marquardt, SPARSE_SCHUR on SuiteSparse (points eliminated first:
// an explicit two-group ordering), from the file's parameters. --linear-solver iterative-schur
// takes ITERATIVE_SCHUR with the SCHUR_JACOBI preconditioner instead (Ceres' choice for large
// problems, S never formed: what sbm's AUTO does on a nearly dense S;
// bench/results/NOTES-ba-gpu.md),
// for problems whose S is too large to factor (5000 cameras: a dense 45 000-unknown factor). The camera model is sbm's
// (blocks/geometry.c sbm__bal_project, the BAL convention): P = R(w) X + t with R(w) the
// angle-axis rotation, p = -P.xy / P.z, pred = f (1 + k1 |p|^2 + k2 |p|^4) p, residual
// pred - observed; the cost is 0.5 |r|^2 in both tools. Jacobians by automatic differentiation
// (ceres::AutoDiffCostFunction, the SnavelyReprojectionError of Ceres' examples).
//
// --loss huber:A / cauchy:A puts ceres::HuberLoss(A) / ceres::CauchyLoss(A) on every residual
// block (one observation), as `sbm ba-solve --loss` does: the cost is then 0.5 sum rho(|r_k|^2)
// in both tools, with the definitions of Ceres that sbm's blocks/sbm_geometry.h copies
// (and Ceres' Corrector for the Jacobian on both sides).
//
// Defaults follow sbm_solver_default_options() as of this commit: function, gradient and
// parameter tolerances 1e-10, initial lambda 1e-4 (Ceres' initial trust region radius is
// 1/lambda: 1e4, its own default), 200 iterations; bench/scripts/solvers.py passes the values it
// runs sbm with. Ceres' gradient and parameter tests are not sbm's to the letter (Ceres: max |x -
// Plus(x, -g)| and |dx| <= tol (|x| + tol)); the function tolerance is what stops both here. Ceres' LM damping is Marquardt's
// diag(J^T J) clamped to [1e-6, 1e32], sbm's SBM_DAMPING_DIAGONAL.
//
// Output: key: value lines (final cost with %.12e), parsed by bench/scripts/solvers.py.
#include <bzlib.h>
#include <ceres/ceres.h>
#include <ceres/rotation.h>
#include <ceres/version.h>

#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Problem {
    long ncam = 0, npts = 0, nobs = 0;
    std::vector<int> cam, pt;
    std::vector<double> xy, cams, pts;
};

// The whole file, decompressed when its name ends in .bz2. Exits with a message on failure.
std::string slurp(const char *path)
{
    std::string out;
    FILE *f = std::fopen(path, "rb");
    if (!f) {
        std::fprintf(stderr, "ceres-ba: cannot open %s: %s\n", path, std::strerror(errno));
        std::exit(1);
    }
    const size_t n = std::strlen(path);
    char buf[1 << 16];
    if (n > 4 && std::strcmp(path + n - 4, ".bz2") == 0) {
        int bzerr = BZ_OK;
        BZFILE *bz = BZ2_bzReadOpen(&bzerr, f, 0, 0, nullptr, 0);
        while (bzerr == BZ_OK) {
            const int got = BZ2_bzRead(&bzerr, bz, buf, sizeof buf);
            if (bzerr == BZ_OK || bzerr == BZ_STREAM_END) out.append(buf, (size_t)got);
        }
        BZ2_bzReadClose(nullptr, bz);
        if (bzerr != BZ_STREAM_END) {
            std::fprintf(stderr, "ceres-ba: %s: bzip2 error %d\n", path, bzerr);
            std::exit(1);
        }
    } else {
        size_t got;
        while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, got);
    }
    std::fclose(f);
    return out;
}

// The next number of s at *p (strtod/strtol), or exit naming the file and what was expected.
double next_number(const char *path, const char **p, const char *what, long index)
{
    char *e = nullptr;
    const double v = std::strtod(*p, &e);
    if (e == *p) {
        std::fprintf(stderr, "ceres-ba: %s: expected %s %ld\n", path, what, index);
        std::exit(1);
    }
    *p = e;
    return v;
}

Problem read_bal(const char *path)
{
    const std::string text = slurp(path);
    const char *p = text.c_str();
    Problem b;
    b.ncam = (long)next_number(path, &p, "the camera count", 0);
    b.npts = (long)next_number(path, &p, "the point count", 0);
    b.nobs = (long)next_number(path, &p, "the observation count", 0);
    if (b.ncam <= 0 || b.npts <= 0 || b.nobs <= 0) {
        std::fprintf(stderr, "ceres-ba: %s: bad header %ld %ld %ld\n", path, b.ncam, b.npts, b.nobs);
        std::exit(1);
    }
    b.cam.resize(b.nobs), b.pt.resize(b.nobs), b.xy.resize(2 * b.nobs);
    for (long k = 0; k < b.nobs; k++) {
        b.cam[k] = (int)next_number(path, &p, "the camera of observation", k + 1);
        b.pt[k] = (int)next_number(path, &p, "the point of observation", k + 1);
        b.xy[2 * k] = next_number(path, &p, "x of observation", k + 1);
        b.xy[2 * k + 1] = next_number(path, &p, "y of observation", k + 1);
        if (b.cam[k] < 0 || b.cam[k] >= b.ncam || b.pt[k] < 0 || b.pt[k] >= b.npts) {
            std::fprintf(stderr, "ceres-ba: %s: observation %ld names camera %d / point %d\n", path,
                         k + 1, b.cam[k], b.pt[k]);
            std::exit(1);
        }
    }
    b.cams.resize(9 * b.ncam), b.pts.resize(3 * b.npts);
    for (long k = 0; k < 9 * b.ncam; k++) b.cams[k] = next_number(path, &p, "camera parameter", k + 1);
    for (long k = 0; k < 3 * b.npts; k++) b.pts[k] = next_number(path, &p, "point coordinate", k + 1);
    return b;
}

// sbm__bal_project's model, residual = predicted - observed.
struct Reprojection {
    Reprojection(double x, double y) : ox(x), oy(y) {}
    template <typename T>
    bool operator()(const T *const camera, const T *const point, T *residual) const
    {
        T P[3];
        ceres::AngleAxisRotatePoint(camera, point, P);
        P[0] += camera[3], P[1] += camera[4], P[2] += camera[5];
        const T px = -P[0] / P[2], py = -P[1] / P[2];
        const T r2 = px * px + py * py;
        const T rho = T(1.0) + r2 * (camera[7] + camera[8] * r2);
        residual[0] = camera[6] * rho * px - ox;
        residual[1] = camera[6] * rho * py - oy;
        return true;
    }
    double ox, oy;
};

int usage(const char *why)
{
    if (why) std::fprintf(stderr, "ceres-ba: %s\n", why);
    std::fprintf(stderr,
                 "usage: ceres-ba --bal FILE [--threads T] [--iterations N] [--function-tolerance X]\n"
                 "                [--gradient-tolerance X] [--parameter-tolerance X]\n"
                 "                [--initial-lambda X] [--loss none|huber:A|cauchy:A]\n"
                 "                [--linear-solver sparse-schur|iterative-schur] [--verbose]\n");
    return 2;
}

// --loss's value: none (nullptr), huber:A or cauchy:A with A finite and > 0. Exits with the
// usage on anything else.
ceres::LossFunction *parse_loss(const std::string &v, std::string *text)
{
    *text = v;
    if (v == "none") return nullptr;
    const size_t colon = v.find(':');
    const std::string kind = v.substr(0, colon);
    if (colon != std::string::npos && (kind == "huber" || kind == "cauchy")) {
        const char *a = v.c_str() + colon + 1;
        char *e = nullptr;
        const double x = std::strtod(a, &e);
        if (e != a && *e == '\0' && x > 0 && std::isfinite(x))
            return kind == "huber" ? static_cast<ceres::LossFunction *>(new ceres::HuberLoss(x))
                                   : new ceres::CauchyLoss(x);
    }
    std::exit(usage(("--loss: '" + v + "' is not none, huber:A or cauchy:A (A > 0)").c_str()));
}

}  // namespace

int main(int argc, char **argv)
{
    const char *bal = nullptr;
    ceres::LossFunction *loss = nullptr; // shared by every residual block, owned by the problem
    std::string loss_text = "none";
    bool iterative = false;
    int threads = 1, iterations = 200, verbose = 0;
    double ftol = 1e-10, gtol = 1e-10, ptol = 1e-10, lambda0 = 1e-4;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (a == "--verbose") {
            verbose = 1;
            continue;
        }
        if (a == "--help" || a == "-h") return usage(nullptr), 0;
        if (i + 1 >= argc) return usage(("option " + a + " needs a value").c_str());
        const char *v = argv[++i];
        char *e = nullptr;
        const double x = std::strtod(v, &e);
        const bool num = e != v && *e == '\0';
        if (a == "--bal") bal = v;
        else if (a == "--loss") delete loss, loss = parse_loss(v, &loss_text);
        else if (a == "--linear-solver" && std::strcmp(v, "sparse-schur") == 0) iterative = false;
        else if (a == "--linear-solver" && std::strcmp(v, "iterative-schur") == 0) iterative = true;
        else if (!num) return usage(("invalid value '" + std::string(v) + "' of " + a).c_str());
        else if (a == "--threads" && x >= 1 && x <= 1024) threads = (int)x;
        else if (a == "--iterations" && x >= 0 && x <= 100000) iterations = (int)x;
        else if (a == "--function-tolerance" && x >= 0) ftol = x;
        else if (a == "--gradient-tolerance" && x >= 0) gtol = x;
        else if (a == "--parameter-tolerance" && x >= 0) ptol = x;
        else if (a == "--initial-lambda" && x > 0) lambda0 = x;
        else return usage(("unknown option or invalid value: " + a + " " + v).c_str());
    }
    if (!bal) return usage("needs --bal FILE");

    Problem b = read_bal(bal);
    ceres::Problem problem; // takes the loss (Ceres counts the blocks that share it)
    for (long k = 0; k < b.nobs; k++) {
        auto *cost = new ceres::AutoDiffCostFunction<Reprojection, 2, 9, 3>(
            new Reprojection(b.xy[2 * k], b.xy[2 * k + 1]));
        problem.AddResidualBlock(cost, loss, &b.cams[9 * (size_t)b.cam[k]],
                                 &b.pts[3 * (size_t)b.pt[k]]);
    }
    auto *ordering = new ceres::ParameterBlockOrdering;
    for (long j = 0; j < b.npts; j++) ordering->AddElementToGroup(&b.pts[3 * j], 0);
    for (long c = 0; c < b.ncam; c++) ordering->AddElementToGroup(&b.cams[9 * c], 1);

    ceres::Solver::Options o;
    o.minimizer_type = ceres::TRUST_REGION;
    o.trust_region_strategy_type = ceres::LEVENBERG_MARQUARDT;
    o.linear_solver_type = iterative ? ceres::ITERATIVE_SCHUR : ceres::SPARSE_SCHUR;
    if (iterative) o.preconditioner_type = ceres::SCHUR_JACOBI;
    o.sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
    o.linear_solver_ordering.reset(ordering);
    o.num_threads = threads;
    o.max_num_iterations = iterations;
    o.function_tolerance = ftol;
    o.gradient_tolerance = gtol;
    o.parameter_tolerance = ptol;
    o.initial_trust_region_radius = 1.0 / lambda0;
    o.minimizer_progress_to_stdout = verbose != 0;
    o.logging_type = verbose ? ceres::PER_MINIMIZER_ITERATION : ceres::SILENT;
    std::string why;
    if (!o.IsValid(&why)) {
        std::fprintf(stderr, "ceres-ba: invalid solver options: %s\n", why.c_str());
        return 1;
    }

    ceres::Solver::Summary s;
    const auto t0 = std::chrono::steady_clock::now();
    ceres::Solve(o, &problem, &s);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (verbose) std::printf("%s\n", s.FullReport().c_str());
    std::printf("problem: %s: %ld cameras, %ld points, %ld observations\n", bal, b.ncam, b.npts,
                b.nobs);
    if (iterative)
        std::printf("ceres: %s, ITERATIVE_SCHUR (%s), LM, autodiff, threads %d\n", CERES_VERSION_STRING,
                    ceres::PreconditionerTypeToString(s.preconditioner_type_used), s.num_threads_used);
    else
        std::printf("ceres: %s, SPARSE_SCHUR (%s), LM, autodiff, threads %d\n", CERES_VERSION_STRING,
                    ceres::SparseLinearAlgebraLibraryTypeToString(s.sparse_linear_algebra_library_type),
                    s.num_threads_used);
    std::printf("loss: %s\n", loss_text.c_str());
    std::printf("initial_cost: %.12e\n", s.initial_cost);
    std::printf("final_cost: %.12e\n", s.final_cost);
    // summary.iterations[0] is the start (counted by Ceres as a successful step): left out
    int its = 0, ok = 0;
    for (size_t k = 1; k < s.iterations.size(); k++) its++, ok += s.iterations[k].step_is_successful;
    std::printf("iterations: %d (%d successful, %d unsuccessful)\n", its, ok, its - ok);
    std::printf("termination: %s (%s)\n", ceres::TerminationTypeToString(s.termination_type),
                s.message.c_str());
    std::printf("time_total_s: %.6f\n", s.total_time_in_seconds);
    std::printf("time_minimizer_s: %.6f\n", s.minimizer_time_in_seconds);
    std::printf("time_wall_s: %.6f\n", wall);
    return s.IsSolutionUsable() ? 0 : 1;
}
