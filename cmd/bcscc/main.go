// Command bcscc compiles and links C MPI programs for bcsmpi, as mpicc does:
//
//	bcscc -o hello hello.c && bcsrun -n 4 ./hello
//
// It runs cc (or $BCS_CC) with bcsmpi's mpi.h (the MPI-5 standard ABI) on
// the include path and, when linking, libmpi_abi.so.1 and its run path.
// -show prints the command instead of running it; MPICH's -compile-info and
// -link-info and Open MPI's -showme and -showme:<part> (compile, link,
// incdirs, libdirs, libs, command, version, help) answer build systems' queries
// in those wrappers' formats (CMake's FindMPI uses them); -cc=<compiler>
// picks the compiler, as MPICH's does; --build (re)builds the library only. The library is built on first use; see internal/ccwrap.
package main

import (
	"os"

	"github.com/bcsmpi/bcsmpi/internal/ccwrap"
)

func main() { os.Exit(ccwrap.Main(ccwrap.CC, os.Args[1:])) }
