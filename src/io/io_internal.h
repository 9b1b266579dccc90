/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal declarations of the I/O layer: the line reader and the atomic writer, and the
 * host containers of BAL problems and g2o pose graphs that the BA and SLAM layers read. */
#ifndef SBM_IO_INTERNAL_H
#define SBM_IO_INTERNAL_H

#include "sbm_internal.h"
#include "sbm_io.h"

#include <stdarg.h>

/* ---------------------------------------------------------------------------------------- */
/* Byte streams, plain or compressed (stream.c)                                             */
/* ---------------------------------------------------------------------------------------- */

/* A file read as bytes: gzip and bzip2 (told by their magic bytes, not by the name) are
 * decompressed, anything else is read as it is. */
typedef struct sbm__stream {
    sbm_ctx *ctx;          /* for messages and host scratch */
    const char *path;      /* for messages */
    void *file;            /* FILE* */
    int kind;              /* plain, gzip or bzip2 (stream.c) */
    void *z;               /* z_stream* of a gzip file, else NULL */
    void *bz;              /* BZFILE* of a bzip2 file, else NULL */
    unsigned char *in;     /* compressed input (gzip) */
    unsigned char head[4]; /* bytes read to tell the kind, not yet delivered (plain) */
    size_t nhead;          /* their count */
    int in_eof;            /* no more compressed input (gzip) */
    int member_done;       /* a gzip member has ended; another may follow */
    int eof;               /* no more bytes */
    int64_t bytes;         /* size of a plain regular file; -1 when compressed or not regular */
    int64_t line;          /* set by the caller: the line being read, for messages (0: none) */
} sbm__stream;

/* Open path. SBM_ERR_IO "path: cannot open: reason" when it cannot be opened or read. */
sbm_status sbm__stream_open(sbm_ctx *ctx, const char *path, sbm__stream *s);
/* The same on a FILE* the caller opened (its own message for a missing file); the stream owns
 * it from here on, also on failure. */
sbm_status sbm__stream_open_file(sbm_ctx *ctx, const char *path, void *file, sbm__stream *s);
/* Up to n bytes into dst; *got < n only at the end of the data. Read errors, corrupt or
 * truncated compressed data: SBM_ERR_IO naming the file (and s->line). */
sbm_status sbm__stream_read(sbm__stream *s, char *dst, size_t n, size_t *got);
void sbm__stream_close(sbm__stream *s);
/* The reason for a libbz2 error code, for messages. */
const char *sbm__bz_reason(int bzerr);

/* ---------------------------------------------------------------------------------------- */
/* Text files, plain or compressed (text_io.c)                                              */
/* ---------------------------------------------------------------------------------------- */

/* The longest line a text reader accepts (bytes, without the newline): 16 MiB, far above any
 * line of the formats read (a 3 MiB comment line is tested), far below a machine's memory. */
#define SBM__TEXT_MAX_LINE ((size_t)1 << 24)

/* A line reader on a stream. Numbers are parsed in the "C" numeric locale while it is open. */
typedef struct sbm__text_reader {
    sbm_ctx *ctx;         /* for messages and host scratch */
    const char *path;     /* for messages */
    sbm__stream src;      /* the bytes (src.bytes: the plain file's size, or -1) */
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

/* Open path, plain, gzip or bzip2 (sbm__stream_open). SBM_ERR_IO naming the file and reason. */
sbm_status sbm__text_open(sbm_ctx *ctx, const char *path, sbm__text_reader *rd);
/* The same on a FILE* the caller opened; the reader owns it from here on, also on failure. */
sbm_status sbm__text_open_file(sbm_ctx *ctx, const char *path, void *file,
                               sbm__text_reader *rd);
/* Next line into rd->text (CR before the newline removed, a UTF-8 byte-order mark at the start
 * of the file skipped); rd->text is NULL at the end. A line longer than SBM__TEXT_MAX_LINE is
 * SBM_ERR_PARSE "path:line: the line is longer than ...". */
sbm_status sbm__text_next_line(sbm__text_reader *rd);
void sbm__text_close(sbm__text_reader *rd);
/* Records "path:line: reason" (the call name is prefixed by sbm__error). */
sbm_status sbm__text_error(sbm__text_reader *rd, sbm_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A writer (text_write.c): to target.tmp.XXXXXX, renamed to target by commit, when path is a
 * regular file, a link to one or a new name; in place otherwise ("-": the standard output).
 * ".bz2", ".gz": compressed. */
typedef struct sbm__text_writer {
    sbm_ctx *ctx;        /* for messages */
    const char *path;    /* the name given */
    char *target;        /* the regular file replaced (host memory), or NULL: in place */
    char *tmp;           /* temporary name (host memory), or NULL */
    void *file;          /* FILE* */
    void *bz;            /* BZFILE* or NULL */
    void *gz;            /* z_stream* (deflate, gzip wrapper) or NULL */
    unsigned char *zbuf; /* its output buffer */
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
/* Flush, close and (not in place) rename; on failure (or after an earlier failure) the
 * temporary is removed. */
sbm_status sbm__text_commit(sbm__text_writer *w);
/* Close and remove the temporary without renaming. */
void sbm__text_abort(sbm__text_writer *w);
/* The "C" numeric locale for this thread while a reader or writer is open (*c NULL: none). */
void sbm__text_locale_begin(void **c, void **old);
void sbm__text_locale_end(void **c, void **old);


/* ---------------------------------------------------------------------------------------- */
/* Matrix Market entry checks (mtx_checks.c)                                                */
/* ---------------------------------------------------------------------------------------- */

/* The file line of every entry: entries follow the size line one a line, except for the blank
 * and comment lines between them, of which only the entry count at each is kept. */
typedef struct sbm__mtx_lines {
    int64_t size_line; /* line of the size line */
    int64_t *skip;     /* entries stored when each skipped line after it was read (host) */
    int64_t nskip;     /* skipped lines */
    int64_t cap;       /* capacity of skip */
} sbm__mtx_lines;

/* Record a skipped line read after count entries. */
sbm_status sbm__mtx_lines_skip(sbm_ctx *ctx, sbm__mtx_lines *L, int64_t count);
/* The line of entry number `entry` (0-based, file order). */
int64_t sbm__mtx_line_of(const sbm__mtx_lines *L, int64_t entry);
void sbm__mtx_lines_free(sbm_ctx *ctx, sbm__mtx_lines *L);
/* A symmetric or skew-symmetric file's entries (0-based, file order): SBM_ERR_PARSE
 * "path:line: entry (i,j) mirrors the entry (j,i) on line L..." for the first entry whose
 * mirror is stored too. */
sbm_status sbm__mtx_check_mirrors(sbm_ctx *ctx, const char *path, const sbm__mtx_lines *L,
                                  int64_t count, const int32_t *row, const int32_t *col);

/* The machine's physical memory in bytes (0: unknown). */
double sbm__host_memory_bytes(void);
/* SBM_ERR_OUT_OF_MEMORY "path:line: size line: a m x n matrix ... needs at least B bytes, more
 * than this machine's memory" when the arrays the size line implies cannot fit (mirrored: the
 * entries are doubled; ranked: the columns are bucketed over the distinct ones). */
sbm_status sbm__mtx_check_memory(sbm__text_reader *rd, int64_t m, int64_t n, int64_t nnz,
                                 int mirrored, int ranked);

/* The summed matrix and the entries it was summed from. */
typedef struct sbm__mtx_summed {
    int64_t m;             /* rows */
    const int64_t *rowptr; /* the summed CSR (columns ranked when ucol) */
    const int32_t *colind;
    const double *values;
    int64_t count;         /* expanded entries, file order */
    const int32_t *row;
    const int32_t *col;
    const double *val;
    int mirrored;          /* 1: each off-diagonal entry is followed by its mirror */
    const int32_t *ucol;   /* column of each rank, or NULL */
} sbm__mtx_summed;

/* SBM_ERR_PARSE "path:line: the duplicates of entry (i,j) sum to inf here ..." naming the entry
 * where the running sum of the first non-finite value stopped being finite. */
sbm_status sbm__mtx_check_sums(sbm_ctx *ctx, const char *path, const sbm__mtx_lines *L,
                               const sbm__mtx_summed *s);

/* ---------------------------------------------------------------------------------------- */
/* Host containers (bal.c, g2o.c); the BA and SLAM layers read and update them              */
/* ---------------------------------------------------------------------------------------- */

struct sbm_bal_problem {
    int64_t ncam;       /* cameras */
    int64_t npts;       /* points */
    int64_t nobs;       /* observations */
    int32_t *obs_cam;   /* camera of each observation (nobs) */
    int32_t *obs_pt;    /* point of each observation (nobs) */
    double *obs_xy;     /* measurements (2*nobs) */
    double *cam;        /* camera parameters (9*ncam) */
    double *pts;        /* point parameters (3*npts) */
    unsigned char *cam_const; /* 1: camera held constant (ncam; NULL until one is set) */
    unsigned char *pt_const;  /* 1: point held constant (npts; NULL until one is set) */
    unsigned char *cam_prior; /* 1: camera has a prior (ncam; NULL until one is set) */
    double *prior_mean; /* 9 per camera (with cam_prior) */
    double *prior_info; /* 81 per camera, column-major (with cam_prior) */
    int64_t nprior;     /* cameras with a prior */
    int in_memory;      /* 1: sbm_bal_problem_create (checked strictly by the BA layer) */
    sbm_allocator a;    /* allocator of the arrays and the struct */
};

struct sbm_g2o_graph {
    int dim;                /* 2 or 3 */
    int ps;                 /* pose size: 3 or 7 */
    int ed;                 /* error dimension: 3 or 6 */
    int64_t nv;             /* vertices */
    int64_t ne;             /* edges */
    int64_t nfixed;         /* vertices held fixed */
    int32_t *vid;           /* file id of each vertex */
    double *poses;          /* ps per vertex */
    unsigned char *fixed;   /* 1 if held fixed */
    int32_t *efrom;         /* vertex index of each edge's first vertex */
    int32_t *eto;           /* and of its second */
    double *emeas;          /* ps per edge */
    double *einfo;          /* ed*ed per edge, column-major full */
    int from_edges;         /* 1: no VERTEX lines */
    int64_t nrepaired;      /* information matrices projected to PSD on reading */
    int64_t nprior;         /* priors: the last nprior edges, from the anchor (the last vertex,
                             * fixed at the identity, hidden by sbm_g2o_get_info); 0: no anchor */
    sbm_allocator a;        /* allocator of everything */
};

/* Every vertex and edge, the anchor and the priors included (what the solvers work on);
 * sbm_g2o_get_info hides them. */
sbm_g2o_info sbm__g2o_solver_info(const sbm_g2o_graph *g);
/* A graph of dim 2 or 3 with nv vertices and ne edges, arrays allocated (values unset, none
 * fixed), g2o_build.c. NULL on failure (the context's status says why). */
sbm_g2o_graph *sbm__g2o_graph_alloc(sbm_ctx *ctx, int dim, int64_t nv, int64_t ne);
/* The gauge: in every connected component (edges and priors) without a fixed vertex, hold the
 * first vertex fixed (fix = 1) or, fix = 0, return SBM_ERR_INVALID_ARGUMENT naming its first
 * vertex and size (what = the caller's advice). Updates nfixed. */
sbm_status sbm__g2o_gauge(sbm_ctx *ctx, sbm_g2o_graph *g, int fix, const char *what);
/* The symmetric n x n A (column-major, n <= 9, finite): 1 if positive semidefinite within
 * SBM_G2O_PSD_TOLERANCE; *smallest the smallest eigenvalue and *largest the largest magnitude
 * (only when it is not: 0 otherwise). */
int sbm__sym_psd(int n, const double *A, double *smallest, double *largest);

/* The information matrices of a g2o file as it is read (g2o_information.c). */
typedef struct sbm__g2o_omega_scan {
    int repair;             /* 1: project an indefinite Omega (SBM_G2O_INFORMATION_REPAIR) */
    int64_t bad;            /* Omegas outside SBM_G2O_PSD_TOLERANCE so far (repaired, if repair) */
    int64_t first_line;     /* the first one: its line, */
    int32_t first_from;     /* its vertex ids, */
    int32_t first_to;
    double first_smallest;  /* its smallest eigenvalue */
    double first_largest;   /* and largest eigenvalue magnitude */
} sbm__g2o_omega_scan;

/* Check the n x n symmetric omega (full, column-major, n = 3 or 6; finite) of the edge from -> to
 * on the given line, counting it in s when it is not PSD, and (s->repair) replacing it by the
 * nearest PSD matrix; a PSD omega is left as it is. */
void sbm__g2o_omega_check(sbm__g2o_omega_scan *s, int64_t line, int32_t from, int32_t to, int n,
                          double *omega);
/* After the whole file: SBM_ERR_PARSE naming the first indefinite Omega's file:line, edge,
 * smallest eigenvalue and the count of them among edges, unless there is none or s->repair. */
sbm_status sbm__g2o_omega_refuse(sbm__text_reader *rd, const sbm__g2o_omega_scan *s,
                                 const char *tag, int64_t edges);

/* A problem with arrays for the given counts (uninitialised), allocated as sbm_bal_read does. */
sbm_status sbm__bal_alloc(sbm_ctx *ctx, int64_t ncam, int64_t npts, int64_t nobs,
                          sbm_bal_problem **out);

#endif /* SBM_IO_INTERNAL_H */
