/*
 * peers: the benchmark bench/peers/run.sh runs under Open MPI and MPICH; its
 * Go twin (gotwin/main.go) does the same work on bcsmpi's mpiapi. Keep the two
 * in step: same iterations, same sizes, same output lines.
 *
 *   peers calibrate            (no MPI) loop count of the fixed work for 1 ms
 *   peers memcpy               (no MPI) memcpy bandwidth at 16 MiB, the reference
 *   peers all LOOPS            every measure, rank 0 prints "key value" lines
 *   peers stencil LOOPS ITERS  the stencil only (for the shared-cores runs)
 *
 * Output (rank 0, one "key value" per line): lat_us (8-byte half round trip,
 * p50), pp_SIZE_MBps (ping-pong bandwidth), stream_MBps (64 x 1 MiB window),
 * barrier_us / allreduce_us (p50), st_comm_ms / st_comp_ms / st_wall_ms (per
 * stencil iteration, mean over ranks).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

volatile double sink;

/* The fixed work: a dependent chain of multiply-adds, LOOPS of them. */
static void work(long loops) {
  double x = 1.0;
  for (long i = 0; i < loops; i++) x = x * 1.0000001 + 1e-9;
  sink += x;
}

static long calibrate(void) {
  long loops = 1000;
  for (;;) {
    double t0 = now();
    work(loops);
    double el = now() - t0;
    if (el > 0.05) {
      /* best of five at this count, then scale to 1 ms */
      double best = el;
      for (int i = 0; i < 5; i++) {
        t0 = now();
        work(loops);
        el = now() - t0;
        if (el < best) best = el;
      }
      return (long)(loops * 1e-3 / best);
    }
    loops *= 2;
  }
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, n, sizeof *v, cmpd);
  return v[n / 2];
}

static int me, np;
static double times[1000];

/* Half round trips of size bytes between ranks 0 and 1, iters of them. */
static double pingpong(char *buf, int size, int iters, int want_median) {
  int peer = 1 - me;
  MPI_Barrier(MPI_COMM_WORLD);
  double total = now();
  for (int i = 0; i < iters; i++) {
    double t0 = now();
    if (me == 0) {
      MPI_Send(buf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
      MPI_Recv(buf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (me == 1) {
      MPI_Recv(buf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
    }
    times[i] = (now() - t0) / 2;
  }
  total = (now() - total) / (2.0 * iters);
  return want_median ? median(times, iters) : total;
}

static void stencil(long loops, int iters) {
  int h = 64 << 10, left = (me + np - 1) % np, right = (me + 1) % np;
  char *sl = calloc(h, 1), *sr = calloc(h, 1), *rl = calloc(h, 1), *rr = calloc(h, 1);
  double comp = 0, comm = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now();
  for (int it = 0; it < iters; it++) {
    double c0 = now();
    work(loops);
    double m0 = now();
    comp += m0 - c0;
    MPI_Request rs[4];
    MPI_Irecv(rl, h, MPI_BYTE, left, 1, MPI_COMM_WORLD, &rs[0]);
    MPI_Irecv(rr, h, MPI_BYTE, right, 0, MPI_COMM_WORLD, &rs[1]);
    MPI_Isend(sl, h, MPI_BYTE, left, 0, MPI_COMM_WORLD, &rs[2]);
    MPI_Isend(sr, h, MPI_BYTE, right, 1, MPI_COMM_WORLD, &rs[3]);
    MPI_Waitall(4, rs, MPI_STATUSES_IGNORE);
    comm += now() - m0;
  }
  double wall = now() - t0;
  double in[3] = {comm, comp, wall}, out[3];
  MPI_Reduce(in, out, 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me == 0) {
    printf("st_comm_ms %.4f\n", out[0] * 1e3 / np / iters);
    printf("st_comp_ms %.4f\n", out[1] * 1e3 / np / iters);
    printf("st_wall_ms %.4f\n", out[2] * 1e3 / np / iters);
  }
  free(sl), free(sr), free(rl), free(rr);
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "calibrate") == 0) {
    printf("%ld\n", calibrate());
    return 0;
  }
  if (argc >= 2 && strcmp(argv[1], "memcpy") == 0) { /* 16 MiB, best of 5 x 20 */
    size_t n = 16 << 20;
    char *a = malloc(n), *b = malloc(n);
    memset(a, 1, n), memset(b, 2, n);
    double best = 1e9;
    for (int t = 0; t < 5; t++) {
      double t0 = now();
      for (int i = 0; i < 20; i++) memcpy(b, a + (i & 1), n - 1);
      double el = (now() - t0) / 20;
      if (el < best) best = el;
    }
    printf("memcpy_MBps %.1f\n", n / best / 1e6);
    return 0;
  }
  if (argc < 3) {
    fprintf(stderr, "usage: peers calibrate | peers all LOOPS | peers stencil LOOPS ITERS\n");
    return 2;
  }
  long loops = atol(argv[2]);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (strcmp(argv[1], "stencil") == 0) {
    stencil(loops, argc > 3 ? atoi(argv[3]) : 300);
    MPI_Finalize();
    return 0;
  }
  char *buf = malloc(16 << 20);
  memset(buf, 1, 16 << 20);
  double lat = pingpong(buf, 8, 200, 1);
  if (me == 0) printf("lat_us %.3f\n", lat * 1e6);
  static const int sizes[] = {8, 1024, 65536, 1 << 20, 16 << 20};
  for (int i = 0; i < 5; i++) {
    int s = sizes[i], iters = s >= (16 << 20) ? 4 : s >= (1 << 20) ? 32 : 100;
    pingpong(buf, s, 2, 0); /* warm up */
    double t = pingpong(buf, s, iters, 0);
    if (me == 0) printf("pp_%d_MBps %.4g\n", s, s / t / 1e6);
  }
  /* streaming window: 64 x 1 MiB, rank 0 to rank 1, 3 rounds after a warm-up */
  {
    int n = 64, m = 1 << 20;
    char *win = malloc((size_t)n * m);
    memset(win, 2, (size_t)n * m);
    MPI_Request rs[64];
    double t0 = 0;
    for (int round = 0; round < 4; round++) {
      if (round == 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = now();
      }
      for (int i = 0; i < n && me < 2; i++) {
        if (me == 0)
          MPI_Isend(win + (size_t)i * m, m, MPI_BYTE, 1, i, MPI_COMM_WORLD, &rs[i]);
        else
          MPI_Irecv(win + (size_t)i * m, m, MPI_BYTE, 0, i, MPI_COMM_WORLD, &rs[i]);
      }
      if (me < 2) MPI_Waitall(n, rs, MPI_STATUSES_IGNORE);
      if (me == 1) MPI_Send(buf, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD);
      if (me == 0) MPI_Recv(buf, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    double el = now() - t0;
    if (me == 0) printf("stream_MBps %.1f\n", 3.0 * n * m / el / 1e6);
    free(win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < 200; i++) {
    double t0 = now();
    MPI_Barrier(MPI_COMM_WORLD);
    times[i] = now() - t0;
  }
  if (me == 0) printf("barrier_us %.3f\n", median(times, 200) * 1e6);
  double in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
  for (int i = 0; i < 200; i++) {
    double t0 = now();
    MPI_Allreduce(in, out, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    times[i] = now() - t0;
  }
  if (me == 0) printf("allreduce_us %.3f\n", median(times, 200) * 1e6);
  stencil(loops, 300);
  free(buf);
  MPI_Finalize();
  return 0;
}
