// Predefined operations on the predefined datatypes that have no Go element
// type (shim.h: BCS_NONE): long double, the complex types and the pair types
// MPI_LONG_DOUBLE_INT, MPI_2REAL and MPI_2DOUBLE_PRECISION. The runtime
// moves them as bytes (or, MPI_2REAL and MPI_2DOUBLE_PRECISION, as their
// parts), so ops.go reduces them as it reduces with a user operation, with
// one of these C functions (bcs_builtin_op) as the user function; it sees
// the pairs in their C layout, padding included (types.go unpacks them). The standard's table (MPI 5.0, 6.9.2): MPI_SUM and MPI_PROD on
// complex; MPI_SUM, MPI_PROD, MPI_MIN and MPI_MAX on floating point;
// MPI_MINLOC and MPI_MAXLOC on pairs.
#include <complex.h>
#include <stddef.h>
#include "shim.h"

#define ARITH(name, T, expr)                                                    \
    static void name(void *in, void *inout, int *len, MPI_Datatype *t) {        \
        (void)t;                                                                \
        const T *a = in;                                                        \
        T *b = inout;                                                           \
        for (int i = 0; i < *len; i++)                                          \
            b[i] = expr;                                                        \
    }

ARITH(ld_sum, long double, a[i] + b[i])
ARITH(ld_prod, long double, a[i] * b[i])
ARITH(ld_min, long double, a[i] < b[i] ? a[i] : b[i])
ARITH(ld_max, long double, a[i] > b[i] ? a[i] : b[i])
ARITH(fc_sum, float _Complex, a[i] + b[i])
ARITH(fc_prod, float _Complex, a[i] * b[i])
ARITH(dc_sum, double _Complex, a[i] + b[i])
ARITH(dc_prod, double _Complex, a[i] * b[i])
ARITH(ldc_sum, long double _Complex, a[i] + b[i])
ARITH(ldc_prod, long double _Complex, a[i] * b[i])

// MINLOC and MAXLOC: the smaller (larger) value; of equal values, the
// smaller index.
#define LOC(name, T, cmp)                                                       \
    static void name(void *in, void *inout, int *len, MPI_Datatype *t) {        \
        (void)t;                                                                \
        const T *a = in;                                                        \
        T *b = inout;                                                           \
        for (int i = 0; i < *len; i++)                                          \
            if (a[i].v cmp b[i].v || (a[i].v == b[i].v && a[i].i < b[i].i))     \
                b[i] = a[i];                                                    \
    }

typedef struct { long double v; int i; } ldi_pair;
typedef struct { float v, i; } ff_pair;
typedef struct { double v, i; } dd_pair;
LOC(ldi_minloc, ldi_pair, <)
LOC(ldi_maxloc, ldi_pair, >)
LOC(ff_minloc, ff_pair, <)
LOC(ff_maxloc, ff_pair, >)
LOC(dd_minloc, dd_pair, <)
LOC(dd_maxloc, dd_pair, >)

// bcs_builtin_op is the function that applies predefined operation op to
// predefined datatype type, or NULL when the standard defines none (or
// bcsmpi has none: MPI_REAL2, MPI_REAL16 and the complex types built of
// them, whose C types this platform lacks).
void *bcs_builtin_op(uintptr_t type, uintptr_t op) {
    MPI_Datatype t = (MPI_Datatype)type;
    MPI_Op o = (MPI_Op)op;
    if (t == MPI_LONG_DOUBLE) {
        if (o == MPI_SUM) return ld_sum;
        if (o == MPI_PROD) return ld_prod;
        if (o == MPI_MIN) return ld_min;
        if (o == MPI_MAX) return ld_max;
        return NULL;
    }
    if (t == MPI_C_FLOAT_COMPLEX || t == MPI_CXX_FLOAT_COMPLEX || t == MPI_COMPLEX || t == MPI_COMPLEX8)
        return o == MPI_SUM ? (void *)fc_sum : o == MPI_PROD ? (void *)fc_prod : NULL;
    if (t == MPI_C_DOUBLE_COMPLEX || t == MPI_CXX_DOUBLE_COMPLEX || t == MPI_DOUBLE_COMPLEX || t == MPI_COMPLEX16)
        return o == MPI_SUM ? (void *)dc_sum : o == MPI_PROD ? (void *)dc_prod : NULL;
    if (t == MPI_C_LONG_DOUBLE_COMPLEX || t == MPI_CXX_LONG_DOUBLE_COMPLEX)
        return o == MPI_SUM ? (void *)ldc_sum : o == MPI_PROD ? (void *)ldc_prod : NULL;
    if (t == MPI_LONG_DOUBLE_INT)
        return o == MPI_MINLOC ? (void *)ldi_minloc : o == MPI_MAXLOC ? (void *)ldi_maxloc : NULL;
    if (t == MPI_2REAL)
        return o == MPI_MINLOC ? (void *)ff_minloc : o == MPI_MAXLOC ? (void *)ff_maxloc : NULL;
    if (t == MPI_2DOUBLE_PRECISION)
        return o == MPI_MINLOC ? (void *)dd_minloc : o == MPI_MAXLOC ? (void *)dd_maxloc : NULL;
    return NULL;
}
