/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm_io.h: files: Matrix Market, BAL problems and g2o pose graphs, plain or compressed (library sbm_io). */
#ifndef SBM_IO_H
#define SBM_IO_H

#include "sbm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================== */
/* Matrix Market I/O                                                                        */
/* ======================================================================================== */

/* Read a coordinate Matrix Market file (real, integer or pattern; general, symmetric or
 * skew-symmetric) into a scalar CSR matrix: symmetric storage is expanded, pattern entries are
 * 1.0, duplicates are summed. gzip and bzip2 files (told by their first bytes, whatever the
 * name) are decompressed. Errors name the file, the line and the reason: among them a
 * non-finite value, duplicates whose sum is not finite, a symmetric (or skew-symmetric) file
 * storing an entry and its mirror, a line longer than 16 MiB, and a size line whose arrays
 * cannot fit the machine's physical memory, or whose reading workspace (the arrays besides the
 * matrix returned) exceeds a CPU context's memory budget (sbm_ctx_set_memory_budget) (both
 * SBM_ERR_OUT_OF_MEMORY, with the bytes needed). A UTF-8 byte-order mark at the start is
 * skipped. */
sbm_status sbm_csr_read_mtx(sbm_ctx *ctx, const char *path, sbm_csr **A);
/* Write as coordinate real general, 1-based, full precision. Written to a temporary file and
 * renamed, so a failed write leaves no file behind.
 * Every writer of this header treats path the same way: a regular file, a new name, or a
 * symbolic link to a regular file (whose target is replaced; the link stays) is written through
 * a temporary beside it and a rename. A regular file with other names (hard links, st_nlink >
 * 1), or a link to one, is refused with SBM_ERR_IO before anything is written: the rename would
 * replace this name only. Anything else is written in place and never replaced: a
 * character device or FIFO (or a link to one), and the names of open descriptors, "-" (the
 * standard output), /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N, which are written
 * through a duplicate of the descriptor. Every write error, ENOSPC included, is SBM_ERR_IO. */
sbm_status sbm_csr_write_mtx(sbm_ctx *ctx, const char *path, const sbm_csr *A);
/* Write a square A, taken to be symmetric, as "coordinate real symmetric": only its entries on
 * and below the diagonal (row >= column; those above are not read), 1-based, full precision;
 * the path handling and the checks of sbm_csr_write_mtx. sbm_csr_read_mtx gives back the full
 * matrix. @return SBM_ERR_DIMENSION_MISMATCH for a matrix that is not square. */
sbm_status sbm_csr_write_mtx_symmetric(sbm_ctx *ctx, const char *path, const sbm_csr *A);
/* Scalar Matrix Market form of a CBC matrix (every stored block's r*c entries). */
sbm_status sbm_cbc_write_mtx(sbm_ctx *ctx, const char *path, const sbm_cbc *A);

/* ---- dense arrays (Matrix Market array files) -------------------------------------------- */

/* Read a dense "%%MatrixMarket matrix array real general" file (field integer or double read
 * as real; keywords case-insensitive; one '%' or more before MatrixMarket): the banner on the
 * first line, comment and blank lines, the size line "rows cols", then rows*cols values, one
 * per line, column by column (blank lines skipped; a '%' line among the values is refused).
 * Values must be finite. A bzip2-compressed file is recognised by its first bytes.
 * *h_values receives rows*cols doubles, column-major, in host memory (a valid pointer also for
 * 0 values), to release with sbm_dense_free(ctx, ...); outputs are 0 / NULL on failure.
 * @return SBM_ERR_PARSE for a malformed file, SBM_ERR_NOT_SUPPORTED for another object, format,
 *         field or symmetry, SBM_ERR_NOT_FINITE for NaN or an infinity, SBM_ERR_OVERFLOW for a
 *         size whose values do not fit in memory (the message names file:line and the reason);
 *         SBM_ERR_IO if the file cannot be opened or read. */
sbm_status sbm_dense_read_mtx(sbm_ctx *ctx, const char *path, int64_t *rows, int64_t *cols,
                              double **h_values);
/* Release an array returned by sbm_dense_read_mtx in the same ctx (NULL is ignored). */
void sbm_dense_free(sbm_ctx *ctx, double *h_values);
/* Write the rows x cols column-major host array h_values (leading dimension ld >= max(1, rows))
 * as "%%MatrixMarket matrix array real general", "%.17g" per value, so it reads back bitwise.
 * Written to a temporary file and renamed, so a failure leaves no file behind (and an existing
 * file untouched); a name ending in ".bz2" is compressed.
 * @return SBM_ERR_NOT_FINITE (naming the entry) if a value is NaN or infinite, before any file
 *         is created; SBM_ERR_INVALID_ARGUMENT for a negative size or a small ld; SBM_ERR_IO. */
sbm_status sbm_dense_write_mtx(sbm_ctx *ctx, const char *path, int64_t rows, int64_t cols,
                               const double *h_values, int64_t ld);
/* Write count values as bare text, one "%.17g" per line and nothing else (for tools that read
 * plain columns of numbers), with the checks and the atomic rename of sbm_dense_write_mtx. */
sbm_status sbm_dense_write_txt(sbm_ctx *ctx, const char *path, int64_t count,
                               const double *h_values);

/* ---- BAL problems ------------------------------------------------------------------------ */

/* Cameras have 9 parameters: angle-axis rotation w (3), translation t (3), focal length f, radial
 * distortion k1, k2; points have 3. For an observation (x, y) of point X by a camera:
 *     P = R(w)*X + t,  p = -P.xy / P.z,  r = 1 + k1*|p|^2 + k2*|p|^4,
 *     residual = f*r*p - (x, y).
 * The cost is 0.5 * sum of squared residuals. */
#define SBM_BAL_CAMERA_PARAMS 9
#define SBM_BAL_POINT_PARAMS 3

typedef struct sbm_bal_problem sbm_bal_problem;

/* A view of a problem (host arrays). The parameter arrays may be written (the estimate). */
typedef struct sbm_bal_info {
    int64_t cameras;           /* number of cameras */
    int64_t points;            /* number of points */
    int64_t observations;      /* number of observations */
    const int32_t *obs_camera; /* camera of each observation (size observations) */
    const int32_t *obs_point;  /* point of each observation (size observations) */
    const double *obs_xy;      /* measured x, y of each observation (size 2*observations) */
    double *camera_params;     /* 9 per camera, BAL order (size 9*cameras) */
    double *point_params;      /* 3 per point (size 3*points) */
    const unsigned char *camera_constant; /* 1: held constant (size cameras; NULL: none is) */
    const unsigned char *point_constant;  /* 1: held constant (size points; NULL: none is) */
    int64_t camera_priors;     /* cameras with a prior (sbm_bal_set_camera_prior) */
    const unsigned char *camera_has_prior; /* 1: the camera has a prior (size cameras; NULL:
                                            * none has) */
    const double *prior_mean;  /* 9 per camera, valid where camera_has_prior */
    const double *prior_information; /* 81 per camera, column-major, valid where
                                      * camera_has_prior */
    int in_memory;             /* 1: made by sbm_bal_problem_create (checked strictly) */
} sbm_bal_info;

/* Read a BAL file ("ncam npts nobs", nobs lines "cam pt x y", then 9*ncam camera and 3*npts point
 * parameters, one value per line or several). gzip and bzip2 files (told by their first bytes,
 * whatever the name) are decompressed.
 * Errors name the file, the line and the reason (SBM_ERR_PARSE; also a line longer than 16 MiB);
 * SBM_ERR_IO if it cannot be opened or read. A UTF-8 byte-order mark at the start is skipped.
 * sbm_bal_write refuses a non-finite value (SBM_ERR_NOT_FINITE naming it) before any file. */
sbm_status sbm_bal_read(sbm_ctx *ctx, const char *path, sbm_bal_problem **problem);
/* Write in BAL format ("%.17g", so it reads back bitwise); through a temporary file and a
 * rename, so a failure leaves no file behind. A name ending in ".bz2" is compressed. The
 * format has no place for constant blocks and priors: they are not written. */
sbm_status sbm_bal_write(sbm_ctx *ctx, const char *path, const sbm_bal_problem *problem);

/* ---- BAL problems built in memory ------------------------------------------------------ */

/* The arrays of a problem built in memory (the caller's; sbm_bal_problem_create copies them).
 * Indices are 0-based; the layouts are those of sbm_bal_info. */
typedef struct sbm_bal_problem_desc {
    int64_t cameras;             /* number of cameras (0 <= cameras <= INT32_MAX) */
    int64_t points;              /* number of points (0 <= points <= INT32_MAX) */
    int64_t observations;        /* number of observations (>= 0) */
    const int32_t *obs_camera;   /* camera of each observation (size observations) */
    const int32_t *obs_point;    /* point of each observation (size observations) */
    const double *obs_xy;        /* measured x, y of each observation (size 2*observations) */
    const double *camera_params; /* 9 per camera, BAL order (size 9*cameras) */
    const double *point_params;  /* 3 per point (size 3*points) */
} sbm_bal_problem_desc;

/* A problem from arrays, no file: the arrays are copied after full validation. @return
 * SBM_ERR_NULL_ARGUMENT for a NULL desc, problem, or array of a non-zero count;
 * SBM_ERR_INVALID_ARGUMENT for a negative count or one above INT32_MAX (cameras, points) and an
 * index out of range ("obs_camera[4] = 7 is not a camera: 0 <= index < 3"); SBM_ERR_NOT_FINITE
 * naming the array, the index and the value of the first non-finite entry. A problem built here
 * is checked strictly when a BA system is made of it (sbm_ba_system_create, sbm_ba_solve): a
 * camera or point that no observation and no prior touches and that is not constant is
 * SBM_ERR_INVALID_ARGUMENT naming it (a problem read from a file keeps the reader's tolerance:
 * such a block gets a zero step). *problem is NULL on failure. */
sbm_status sbm_bal_problem_create(sbm_ctx *ctx, const sbm_bal_problem_desc *desc,
                                  sbm_bal_problem **problem);
/* Hold camera (0-based) constant (constant = 1) or free it again (0): a constant block gets a
 * zero step in every solver of sbm_ba.h (its rows and columns of U and W are replaced by those of
 * the identity with a zero gradient, so the free parameters follow exactly the iterates of the
 * problem without it), and its observations still count in the cost. Takes effect for the BA
 * systems made after the call. @return SBM_ERR_NULL_ARGUMENT, SBM_ERR_INVALID_ARGUMENT for a
 * camera out of range or a flag other than 0 or 1 (naming it). */
sbm_status sbm_bal_set_camera_constant(sbm_ctx *ctx, sbm_bal_problem *problem, int64_t camera,
                                       int constant);
/* Hold point (0-based) constant or free it, as sbm_bal_set_camera_constant does for cameras. */
sbm_status sbm_bal_set_point_constant(sbm_ctx *ctx, sbm_bal_problem *problem, int64_t point,
                                      int constant);
/* A Gaussian prior on camera (0-based): the residual block 0.5 (x - mean)^T information
 * (x - mean) over its 9 parameters x (BAL order: angle-axis, translation, f, k1, k2) joins the
 * cost (no robust loss), U's diagonal block and gc. A prior on the pose alone has zeros in the
 * rows and columns of f, k1, k2; one on the translation alone only the block (3..5, 3..5).
 * information: 81 values, column-major, symmetric and positive semidefinite; NULL removes the
 * camera's prior. A second call replaces the first. Takes effect for the BA systems made after
 * the call. @return SBM_ERR_NULL_ARGUMENT (problem; mean with a non-NULL information);
 * SBM_ERR_INVALID_ARGUMENT for a camera out of range, an information matrix that is not
 * symmetric (naming the entry) or not positive semidefinite (its smallest eigenvalue below
 * -SBM_G2O_PSD_TOLERANCE times its largest magnitude); SBM_ERR_NOT_FINITE naming a non-finite
 * entry. */
sbm_status sbm_bal_set_camera_prior(sbm_ctx *ctx, sbm_bal_problem *problem, int64_t camera,
                                    const double *mean, const double *information);

/* Destroy a BAL problem. NULL is accepted and does nothing. */
void sbm_bal_destroy(sbm_bal_problem *problem);
/* @return the view of the problem (a zeroed struct for NULL). */
sbm_bal_info sbm_bal_get_info(const sbm_bal_problem *problem);

/* ---- g2o pose graphs ------------------------------------------------------------------------ */

/* 2D graphs (VERTEX_SE2 id x y theta; EDGE_SE2 i j x y theta and the upper triangle of the 3x3
 * information matrix) and 3D graphs (VERTEX_SE3:QUAT id x y z qx qy qz qw; EDGE_SE3:QUAT i j
 * x y z qx qy qz qw and the upper triangle of the 6x6 information matrix), FIX id... lines.
 * Errors and increments follow g2o (types_slam2d, types_slam3d):
 *     SE2: e = toVector(Z^-1 (Xi^-1 Xj)), angle normalised to [-pi, pi); Xi (+) d = (x + d0,
 *          y + d1, normalise(theta + d2)).
 *     SE3: e = (t, qx, qy, qz) of Z^-1 (Xi^-1 Xj) with the quaternion's w made >= 0;
 *          Xi (+) d = Xi * (d0..2, quaternion (d3, d4, d5, sqrt(1 - |d3..5|^2))).
 * chi2 = sum over edges of e^T Omega e. A file without VERTEX lines is initialised by composing
 * edges along a breadth-first spanning tree from the first vertex. Vertices are ordered as
 * their VERTEX lines (by increasing id for a file without them). In every connected component
 * without a FIX'ed vertex the first vertex is held fixed (the gauge). */
typedef struct sbm_g2o_graph sbm_g2o_graph;

typedef struct sbm_g2o_info {
    int dim;                        /* 2 (SE2) or 3 (SE3) */
    int pose_size;                  /* values per pose: 3 (x y theta) or 7 (x y z qx qy qz qw) */
    int error_dim;                  /* 3 or 6: the block size of J, Omega, Lambda */
    int64_t vertices;               /* number of vertices */
    int64_t edges;                  /* number of edges */
    int64_t fixed;                  /* vertices held fixed */
    const int32_t *vertex_id;       /* file id of each vertex (size vertices) */
    double *poses;                  /* pose_size per vertex; writable (size pose_size*vertices) */
    const unsigned char *is_fixed;  /* 1 if the vertex is held fixed (size vertices) */
    const int32_t *edge_from;       /* vertex index (not id) of each edge's first vertex */
    const int32_t *edge_to;         /* vertex index of its second vertex */
    const double *edge_measurement; /* pose_size per edge */
    const double *edge_information; /* error_dim^2 per edge, full symmetric, column-major */
    int from_edges;                 /* 1: the file had no VERTEX lines (spanning-tree start) */
    int64_t repaired_information;   /* information matrices projected to the nearest positive
                                     * semidefinite one on reading (SBM_G2O_INFORMATION_REPAIR);
                                     * 0 otherwise */
    int64_t priors;                 /* prior factors (sbm_g2o_graph_create); 0 for a file */
    const int32_t *prior_vertex;    /* vertex index of each prior (size priors) */
    const double *prior_measurement; /* pose_size per prior */
    const double *prior_information; /* error_dim^2 per prior, full symmetric, column-major */
} sbm_g2o_info;

/* Information matrices. Every edge's Omega must be positive semidefinite: its eigenvalues
 * (cyclic Jacobi on the 3x3 or 6x6 matrix) w_1 <= ... <= w_n must satisfy
 *     w_1 >= -SBM_G2O_PSD_TOLERANCE * max_k |w_k|
 * (a zero matrix passes). The tolerance covers the rounding of the eigenvalue computation
 * (a few 1e-16 of the largest) with a wide margin, so an exactly singular Omega (an
 * eigenvalue 0, e.g. a constraint on the rotation only) is accepted; it does not cover the
 * 6 or 7 significant digits most files print, so a singular matrix printed in few digits may
 * be refused, and repair then moves it by less than its own rounding. An Omega outside the
 * tolerance gives an indefinite chi2 (e^T Omega e < 0 for some errors): no minimum exists, and
 * a solver fails on it far from the file (a diagonal block of Lambda that is not positive
 * definite) or, replacing it silently, solves another problem. */
#define SBM_G2O_PSD_TOLERANCE 1e-10

typedef enum sbm_g2o_information {
    SBM_G2O_INFORMATION_REFUSE = 0, /* an indefinite Omega fails the read (the default) */
    SBM_G2O_INFORMATION_REPAIR = 1  /* each indefinite Omega is replaced by the nearest positive
                                     * semidefinite matrix in the Frobenius norm, V max(W, 0) V^T
                                     * of its eigendecomposition V W V^T (negative eigenvalues set
                                     * to 0), symmetric; counted in repaired_information */
} sbm_g2o_information;

typedef struct sbm_g2o_read_options {
    sbm_g2o_information information; /* what to do with an indefinite Omega (default REFUSE) */
} sbm_g2o_read_options;

/* The defaults: information = SBM_G2O_INFORMATION_REFUSE (also what a zeroed struct holds). */
sbm_g2o_read_options sbm_g2o_read_default_options(void);

/* Read a g2o file, plain, gzip or bzip2 (told by its first bytes), with the default options.
 * Errors name the file, the line and the reason (SBM_ERR_PARSE; an element sbm does not read,
 * e.g. a landmark, is SBM_ERR_NOT_SUPPORTED; SBM_ERR_IO for open/read and corrupt or truncated
 * compressed data). A malformed line stops the reading at once; indefinite information matrices
 * are counted to the end of the file and then refused with SBM_ERR_PARSE naming the first one
 * ("file:line: EDGE_SE3:QUAT 12 13: the information matrix is not positive semidefinite:
 * smallest eigenvalue ...") and the count of such edges in the file, before the checks that
 * need the whole file (duplicate vertex ids, edges to undefined vertices). Vertex ids are any
 * int32, negative ones included; a quaternion is normalised (without overflow for huge
 * components; norm below 1e-12: an error); a UTF-8 byte-order mark at the start is skipped; a
 * line longer than 16 MiB is an error. */
sbm_status sbm_g2o_read(sbm_ctx *ctx, const char *path, sbm_g2o_graph **graph);
/* The same with options (NULL: the defaults). An information value outside the enum is
 * SBM_ERR_INVALID_ARGUMENT naming it. With SBM_G2O_INFORMATION_REPAIR the read succeeds and
 * sbm_g2o_get_info(...).repaired_information says how many matrices were changed; an Omega
 * already positive semidefinite (within the tolerance) is kept bitwise. */
sbm_status sbm_g2o_read_ex(sbm_ctx *ctx, const char *path, const sbm_g2o_read_options *options,
                           sbm_g2o_graph **graph);
/* ---- Pose graphs built in memory -------------------------------------------------------- */

/* How sbm_g2o_graph_create reads 3D poses and measurements. */
typedef enum sbm_pose_format {
    SBM_POSE_QUATERNION = 0, /* 7 values: x y z qx qy qz qw (g2o's order); 2D: x y theta */
    SBM_POSE_MATRIX = 1      /* 3D only, 12 values: x y z, then the rotation matrix R row by
                              * row (r00 r01 r02 r10 ... r22) */
} sbm_pose_format;

/* What sbm_g2o_graph_create does with a connected component (vertices joined by edges) that has
 * no fixed vertex and no prior: its poses are then determined only up to a rigid motion. */
typedef enum sbm_gauge {
    SBM_GAUGE_AUTO = 0,  /* hold its first vertex fixed, as sbm_g2o_read does (the default) */
    SBM_GAUGE_REFUSE = 1 /* SBM_ERR_INVALID_ARGUMENT naming the component's first vertex */
} sbm_gauge;

#define SBM_POSE_ROTATION_TOLERANCE 1e-6 /* |q| - 1 and max |R^T R - I| accepted (then made exact) */

/* The arrays of a pose graph built in memory (the caller's; copied). Vertices and edges are
 * given by 0-based index; a prior is a unary factor on one vertex, the error of an edge from the
 * origin (the identity pose) to the vertex: e = toVector(Z^-1 X) with g2o's conventions above,
 * cost contribution e^T Omega e (with the solve's robust loss, as every edge). */
typedef struct sbm_g2o_graph_desc {
    int dim;                        /* 2 (SE2) or 3 (SE3) */
    sbm_pose_format format;         /* of poses, edge_measurement and prior_measurement */
    sbm_gauge gauge;                /* components without a fixed vertex or prior */
    int64_t vertices;               /* >= 1, <= INT32_MAX */
    const double *poses;            /* per vertex: 3 (2D), 7 (QUATERNION) or 12 (MATRIX) */
    const int32_t *vertex_id;       /* ids for messages and sbm_g2o_write (NULL: 0, 1, ...;
                                     * distinct) */
    const unsigned char *fixed;     /* 1: held fixed (size vertices; NULL: none) */
    int64_t edges;                  /* >= 0 */
    const int32_t *edge_from;       /* vertex index of each edge's first vertex */
    const int32_t *edge_to;         /* and of its second (different from the first) */
    const double *edge_measurement; /* the relative pose Xi^-1 Xj per edge, as poses */
    const double *edge_information; /* error_dim^2 per edge, column-major, symmetric PSD
                                     * (NULL: identity) */
    int64_t priors;                 /* >= 0 */
    const int32_t *prior_vertex;    /* vertex index of each prior */
    const double *prior_measurement; /* the vertex's expected pose per prior, as poses */
    const double *prior_information; /* error_dim^2 per prior (NULL: identity) */
} sbm_g2o_graph_desc;

/* A pose graph from arrays, no file (the g2o reader builds its graphs with the same code): every
 * value checked and copied; quaternions with |q| within SBM_POSE_ROTATION_TOLERANCE of 1 are
 * normalised, rotation matrices within it of orthonormal (and det > 0) are converted to the
 * nearest unit quaternion. The gauge: a component holding a fixed vertex or a prior keeps its
 * poses' freedom as given; any other follows desc->gauge. A vertex that no edge and no prior
 * touches and that is not fixed is refused. @return SBM_ERR_NULL_ARGUMENT (desc, graph, an array
 * of a non-zero count); SBM_ERR_INVALID_ARGUMENT naming the field or the array and the index
 * (a count or enum out of range, an index out of range, an edge from a vertex to itself,
 * a repeated vertex id, a rotation outside the tolerance, an information matrix that is not
 * symmetric or not positive semidefinite within SBM_G2O_PSD_TOLERANCE, an untouched vertex, a
 * component without gauge under SBM_GAUGE_REFUSE); SBM_ERR_NOT_FINITE naming the first
 * non-finite value. sbm_g2o_write refuses a graph with priors (SBM_ERR_NOT_SUPPORTED: the g2o
 * types sbm writes have none). *graph is NULL on failure. */
sbm_status sbm_g2o_graph_create(sbm_ctx *ctx, const sbm_g2o_graph_desc *desc,
                                sbm_g2o_graph **graph);
/* Hold vertex (0-based index) fixed (fixed = 1) or free it (0): the solvers of sbm_slam.h leave a
 * fixed pose as it is (it is not an unknown). Takes effect for the systems made after the call.
 * Freeing the only fixed vertex of a component without a prior leaves it without a gauge:
 * sbm_slam_system_create and sbm_slam_solve then refuse the graph naming the component.
 * @return SBM_ERR_NULL_ARGUMENT, SBM_ERR_INVALID_ARGUMENT for a vertex out of range or a flag
 * other than 0 or 1. */
sbm_status sbm_g2o_set_fixed(sbm_ctx *ctx, sbm_g2o_graph *graph, int64_t vertex, int fixed);
/* Destroy a g2o graph. NULL is accepted and does nothing. */
void sbm_g2o_destroy(sbm_g2o_graph *graph);
/* @return the view of the graph: dimension, vertices, edges, poses (a zeroed struct for NULL). */
sbm_g2o_info sbm_g2o_get_info(const sbm_g2o_graph *graph);
/* Write a graph in g2o format with the element types it was read with: a VERTEX line for every
 * vertex (poses as they are now, e.g. after sbm_slam_solve; the graph's order), the edges
 * (measurement and the upper triangle of the information matrix, row by row), and a FIX line
 * for every vertex held fixed (the reader's gauge included). "%.17g", so that sbm_g2o_read gives
 * back the same poses, measurements and information matrices bitwise. Through a temporary file
 * and a rename: a failure leaves no file behind. SBM_ERR_NOT_FINITE (naming the vertex id) for a
 * non-finite pose. The arguments are in the order of every reader and writer: context, path,
 * object. */
sbm_status sbm_g2o_write(sbm_ctx *ctx, const char *path, const sbm_g2o_graph *graph);

#ifdef __cplusplus
}
#endif

#endif /* SBM_IO_H */
