/* Internal declarations of bundle adjustment and SLAM (src/bal.c, src/ba.c, src/g2o.c,
 * src/slam.c, src/solvers.c): the camera and pose-error models, host/context vector transfers,
 * the symmetric product with an upper-stored matrix, PCG and dense Cholesky. */
#ifndef SBM_BA_INTERNAL_H
#define SBM_BA_INTERNAL_H

#include "sbm_internal.h"

#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------------------------------- */
/* Memory and transfers                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* The allocator for host arrays that outlive the call (objects remember it, like matrices do):
 * the context's hook on the CPU backend, malloc otherwise. */
sbm_allocator sbm__ba_host_allocator(const sbm_ctx *ctx);
/* n*size bytes through allocator a, overflow checked; failures recorded in ctx. */
void *sbm__ba_alloc(sbm_ctx *ctx, const sbm_allocator *a, size_t n, size_t size, const char *what);
void sbm__ba_free(const sbm_allocator *a, void *ptr);
/* n doubles in the context's memory (freed with ctx->allocator, which the owner records). */
double *sbm__ba_vec_alloc(sbm_ctx *ctx, int64_t n, const char *what);

/* Copies between host arrays and arrays in the context's memory (n doubles). */
sbm_status sbm__ba_upload(sbm_ctx *ctx, double *dst, const double *h_src, int64_t n);
sbm_status sbm__ba_download(sbm_ctx *ctx, double *h_dst, const double *src, int64_t n);
sbm_status sbm__ba_copy_vec(sbm_ctx *ctx, double *dst, const double *src, int64_t n);

/* A call to another public function from inside a public function: restore the outer call's
 * name and, on failure, prefix the inner message with it ("outer: inner: reason"). */
sbm_status sbm__ba_nested(sbm_ctx *ctx, const char *outer, sbm_status st);

/* Monotonic wall clock in seconds; with sync, the context's queued work is waited for first. */
double sbm__ba_now(sbm_ctx *ctx, int sync);

/* End of iteration it of a nonlinear solver (LM on BAL, GN on g2o) started at t_it: sets
 * rep->time_total, adds the report to *summary (may be NULL) with cost as the final cost so
 * far, and passes it to opt's callback. */
void sbm__solver_end_iteration(sbm_ctx *ctx, const sbm_solver_options *opt, int it, double cost,
                               double t_it, sbm_iteration_report *rep, sbm_solver_summary *summary);

/* ---------------------------------------------------------------------------------------- */
/* Models                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* BAL camera model: pred = f*r(p)*p with p = -P.xy/P.z, P = R(w) X + t. Jc (2x9) and Jp (2x3)
 * are column-major and may be NULL. */
void sbm__bal_project(const double cam[9], const double X[3], double pred[2], double Jc[18],
                      double Jp[6]);
/* y = R(w) x (Rodrigues; the first-order form near w = 0). */
void sbm__angle_axis_rotate(const double w[3], const double x[3], double y[3]);
/* Rotation matrix (column-major 3x3) of an angle-axis vector. */
void sbm__angle_axis_to_matrix(const double w[3], double R[9]);
/* Angle-axis vector of a rotation matrix (column-major). */
void sbm__matrix_to_angle_axis(const double R[9], double w[3]);

/* SE2 poses (x, y, theta). e = toVector(Z^-1 (Xi^-1 Xj)); Ji, Jj (3x3 column-major, may be
 * NULL) are de/d(increment) of vertex i and j at zero. */
void sbm__se2_error(const double xi[3], const double xj[3], const double z[3], double e[3],
                    double Ji[9], double Jj[9]);
void sbm__se2_compose(const double a[3], const double b[3], double c[3]); /* c = a*b */
void sbm__se2_inverse(const double a[3], double b[3]);
void sbm__se2_oplus(double x[3], const double d[3]);
double sbm__normalize_angle(double a);

/* SE3 poses (x, y, z, qx, qy, qz, qw), unit quaternions. e = (t, q.xyz) of Z^-1 (Xi^-1 Xj) with
 * w >= 0; Ji, Jj (6x6 column-major, may be NULL). */
void sbm__se3_error(const double xi[7], const double xj[7], const double z[7], double e[6],
                    double Ji[36], double Jj[36]);
void sbm__se3_compose(const double a[7], const double b[7], double c[7]);
void sbm__se3_inverse(const double a[7], double b[7]);
void sbm__se3_oplus(double x[7], const double d[6]);

/* ---------------------------------------------------------------------------------------- */
/* Host views of the BA system for the solver (src/ba.c)                                    */
/* ---------------------------------------------------------------------------------------- */

/* [gc; gp] of the last linearisation (host, 9*cameras + 3*points). */
const double *sbm__ba_system_host_gradient(const sbm_ba_system *s);
/* The damping scale of every unknown: diag(U), diag(V) clamped to [1e-6, 1e32]. */
void sbm__ba_damping_diagonal(const sbm_ba_system *s, double *out);
/* Block diagonal of S = U - W V^-1 W^T at the system's damping, host (nc blocks of 9x9). */
sbm_status sbm__ba_schur_diagonal_host(sbm_ctx *ctx, const sbm_ba_system *s, double *out);

/* Error of edge k of a graph at its current poses; Ji, Jj (d x d) may be NULL (src/g2o.c). */
void sbm__g2o_edge_error(const sbm_g2o_graph *g, int64_t k, double *e, double *Ji, double *Jj);
double sbm__g2o_chi2_host(const sbm_g2o_graph *g);
/* Seconds the last sbm_slam_linearize spent on errors and J, and on Omega J, Lambda and b. */
void sbm__slam_system_times(const sbm_slam_system *s, double *jacobian, double *lambda);

/* ---------------------------------------------------------------------------------------- */
/* Symmetric matrices stored as their upper block triangle                                  */
/* ---------------------------------------------------------------------------------------- */

/* y = A x for symmetric A given by its upper block triangle: A_up x + A_up^T x - D x, where D
 * holds A's diagonal blocks (a block-diagonal copy refreshed from A's values). When A is block
 * diagonal, D is A itself and the product is one SpMV. */
typedef struct sbm__symup {
    const sbm_cbc *A;     /* the upper-stored matrix (not owned) */
    sbm_cbc *D;           /* its diagonal blocks (owned unless block_diagonal) */
    int64_t *diag_block;  /* host: block index of column j's diagonal block in A, -1 if none */
    int block_diagonal;   /* 1: A has only diagonal blocks */
    int complete;         /* 1: every column has its diagonal block */
    sbm_allocator host_alloc; /* allocator of diag_block */
} sbm__symup;

/* Set up for A's pattern (A must be square with square blocks and upper block triangular). */
sbm_status sbm__symup_init(sbm_ctx *ctx, const sbm_cbc *A, sbm__symup *s);
/* Copy A's current diagonal blocks into D. */
sbm_status sbm__symup_refresh(sbm_ctx *ctx, sbm__symup *s);
/* y = A x (context memory; y separate from x). */
sbm_status sbm__symup_multiply(sbm_ctx *ctx, sbm__symup *s, const double *x, double *y);
void sbm__symup_free(sbm__symup *s);

/* Validate solver options (src/ba_lm.c). */
sbm_status sbm__check_solver_options(sbm_ctx *ctx, const sbm_solver_options *o);

/* ---------------------------------------------------------------------------------------- */
/* Linear solvers                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* y = op(x) on host vectors of length n. */
typedef sbm_status (*sbm__apply_fn)(sbm_ctx *ctx, void *data, const double *h_x, double *h_y);

/* Preconditioned conjugate gradients on host vectors: x from zero, until |r| <= tol*|b| or
 * max_it iterations. precond may be NULL (identity). *iterations and *rel_residual report. */
sbm_status sbm__pcg(sbm_ctx *ctx, int64_t n, sbm__apply_fn apply, void *apply_data,
                    sbm__apply_fn precond, void *precond_data, const double *h_b, double *h_x,
                    int max_it, double tol, int *iterations, double *rel_residual);

/* Solve A x = b for SPD A given by its upper block triangle (any backend): dense Cholesky on the
 * host. @return SBM_ERR_NOT_POSITIVE_DEFINITE (with a message) if the factorisation fails. */
sbm_status sbm__dense_spd_solve(sbm_ctx *ctx, const sbm_cbc *A, const double *h_b, double *h_x);

/* Host block-Jacobi preconditioner: the inverses (Cholesky) of nb SPD b x b blocks. */
typedef struct sbm__host_bjacobi {
    int64_t nb;       /* blocks */
    int b;            /* block size */
    double *inv;      /* nb*b*b, column-major inverses */
    sbm_allocator a;  /* allocator of inv */
} sbm__host_bjacobi;
/* Invert the blocks in place of blocks (nb*b*b); a non-SPD block is regularised by adding a
 * multiple of its diagonal until it factors (a preconditioner, not the system). */
sbm_status sbm__host_bjacobi_init(sbm_ctx *ctx, int64_t nb, int b, const double *blocks,
                                  sbm__host_bjacobi *p);
sbm_status sbm__host_bjacobi_apply(sbm_ctx *ctx, void *data, const double *h_x, double *h_y);
void sbm__host_bjacobi_free(sbm__host_bjacobi *p);

/* Small dense helpers (column-major). */
/* In-place Cholesky (lower) of an n x n SPD matrix; @return 0 on success. */
int sbm__chol(int n, double *a);
/* Inverse of an SPD n x n matrix from its lower Cholesky factor l into inv (full). */
void sbm__chol_inverse(int n, const double *l, double *inv);

/* ---------------------------------------------------------------------------------------- */
/* Text files, plain or bzip2-compressed (src/text_io.c)                                   */
/* ---------------------------------------------------------------------------------------- */

/* A line reader. Numbers are parsed in the "C" numeric locale while it is open. */
typedef struct sbm__text_reader {
    sbm_ctx *ctx;         /* for messages and host scratch */
    const char *path;     /* for messages */
    void *file;           /* FILE* */
    void *bz;             /* BZFILE* for a .bz2 file, else NULL */
    int eof;              /* no more bytes from the source */
    char *buf;            /* one buffer for the whole file */
    size_t cap;           /* its size */
    size_t begin;         /* first unread byte */
    size_t end;           /* one past the last byte read */
    char *text;           /* the current line, NUL-terminated (NULL at the end of the file) */
    size_t len;           /* its length */
    int64_t line;         /* its 1-based number */
    void *locale_c;       /* locale_t of the "C" numeric locale (or NULL) */
    void *locale_old;     /* the thread's locale before */
} sbm__text_reader;

/* Open path (".bz2": through libbz2). SBM_ERR_IO naming the file and errno's reason. */
sbm_status sbm__text_open(sbm_ctx *ctx, const char *path, sbm__text_reader *rd);
/* Next line into rd->text (CR before the newline removed); rd->text is NULL at the end. */
sbm_status sbm__text_next_line(sbm__text_reader *rd);
void sbm__text_close(sbm__text_reader *rd);
/* Records "path:line: reason" (the call name is prefixed by sbm__error). */
sbm_status sbm__text_error(sbm__text_reader *rd, sbm_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A writer to path.tmp.XXXXXX, renamed to path by commit (".bz2": compressed). */
typedef struct sbm__text_writer {
    sbm_ctx *ctx;        /* for messages */
    const char *path;    /* final name */
    char *tmp;           /* temporary name (host memory) */
    void *file;          /* FILE* */
    void *bz;            /* BZFILE* or NULL */
    char *buf;           /* formatting buffer */
    size_t cap, len;     /* its size and fill */
    int failed;          /* a write failed (message recorded) */
    void *locale_c;      /* as in the reader */
    void *locale_old;
} sbm__text_writer;

sbm_status sbm__text_create(sbm_ctx *ctx, const char *path, sbm__text_writer *w);
/* printf into the file. */
sbm_status sbm__text_printf(sbm__text_writer *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Flush, close and rename; on failure (or after an earlier failure) the temporary is removed. */
sbm_status sbm__text_commit(sbm__text_writer *w);
/* Close and remove the temporary without renaming. */
void sbm__text_abort(sbm__text_writer *w);

#endif /* SBM_BA_INTERNAL_H */
