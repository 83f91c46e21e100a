package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPythonExtension builds testdata/pyext.c with bcscc -shared as a CPython
// extension module and runs testdata/pyext_driver.py under bcsrun and as a
// singleton: libmpi_abi.so.1 (a Go c-shared library) loaded by dlopen into an
// interpreter that is not linked against it, as mpi4py's MPI module loads it;
// MPI_Init_thread(MULTIPLE) at import, calls from a second Python thread,
// MPI_ERRORS_RETURN turned into an exception, MPI_Finalize from Py_AtExit.
// Skipped where python3 or its headers (python3-dev) are missing.
func TestPythonExtension(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	out, err := exec.Command(py, "-c", `import sysconfig; print(sysconfig.get_paths()["include"])`).Output()
	if err != nil {
		t.Skipf("python3 sysconfig: %v", err)
	}
	inc := strings.TrimSpace(string(out))
	if _, err := os.Stat(filepath.Join(inc, "Python.h")); err != nil {
		t.Skipf("no Python.h in %s (python3-dev)", inc)
	}
	dir := t.TempDir()
	args := []string{"-shared", "-fPIC", "-Wall", "-Werror", "-I" + inc, "-o", filepath.Join(dir, "pyext.so"), "testdata/pyext.c"}
	if b, err := exec.Command(filepath.Join(bin, "bcscc"), args...).CombinedOutput(); err != nil {
		t.Fatalf("bcscc %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	t.Setenv("PYTHONPATH", dir)
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, py, "testdata/pyext_driver.py"), "pyext", 1) })
	for _, c := range []struct{ ranks, nodes int }{{2, 1}, {3, 2}} {
		t.Run("n"+strconv.Itoa(c.ranks)+"-nodes"+strconv.Itoa(c.nodes), func(t *testing.T) {
			okRanks(t, bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), py, "testdata/pyext_driver.py"), "pyext", c.ranks)
		})
	}
}
