// Command bcscxx compiles and links C++ MPI programs for bcsmpi, as mpicxx
// does: bcscc with c++ (or $BCS_CXX) as the compiler. See cmd/bcscc.
package main

import (
	"os"

	"github.com/bcsmpi/bcsmpi/internal/ccwrap"
)

func main() { os.Exit(ccwrap.Main(ccwrap.CXX, os.Args[1:])) }
