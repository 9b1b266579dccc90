/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to the g2o reader (g2o.c parses a file, g2o_graph.c builds its graph): the elements
 * of a file as parsed, before vertex ids are resolved. */
#ifndef SBM_G2O_INTERNAL_H
#define SBM_G2O_INTERNAL_H

#include "io_internal.h"

/* A growable host array. */
typedef struct garr {
    void *p;       /* elements */
    int64_t n;     /* used */
    int64_t cap;   /* allocated */
    size_t elem;   /* element size */
} garr;

/* Parsed elements, before ids are resolved. */
typedef struct pvertex {
    int32_t id;
    int64_t line;
    double pose[7];
} pvertex;

typedef struct pedge {
    int32_t from, to;  /* ids */
    int64_t line;
    double meas[7];
    double info[36];   /* full, column-major */
} pedge;

typedef struct pfix {
    int32_t id;
    int64_t line;
} pfix;

/* Everything a file holds, as parsed. */
typedef struct g2o_parsed {
    garr verts;                /* pvertex, file order */
    garr edges;                /* pedge, file order */
    garr fixes;                /* pfix, file order */
    int dim;                   /* 2 or 3 (0 before the first element) */
    int64_t first_line;        /* line of the first element */
    sbm__g2o_omega_scan omega; /* the information matrices' check */
} g2o_parsed;

/* The graph of a parsed file (rd names lines in messages): vertex ids resolved, the gauge
 * fixed, the spanning-tree start of an edge-only file (g2o_graph.c). */
sbm_status sbm__g2o_build(sbm_ctx *ctx, sbm__text_reader *rd, const g2o_parsed *p,
                          sbm_g2o_graph **graph);

#endif /* SBM_G2O_INTERNAL_H */
