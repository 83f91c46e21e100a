package plots

import (
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func checkPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("%s is %dx%d, want %dx%d", path, b.Dx(), b.Dy(), w, h)
	}
	// Non-empty: the plot must have drawn more than a couple of colours.
	colours := map[uint32]bool{}
	for y := 0; y < h; y += 3 {
		for x := 0; x < w; x += 3 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[r>>8<<16|g>>8<<8|b>>8] = true
		}
	}
	if len(colours) < 4 {
		t.Fatalf("%s looks blank (%d colours)", path, len(colours))
	}
}

func TestFigures(t *testing.T) {
	dir := t.TempDir()
	var g, n strings.Builder
	g.WriteString("slice,GETTS,GTDEM,GTMSM,GTTS,USRTS,USRDEM,USRMSM,LATE,SKIPPED\n")
	n.WriteString("slice,LETTS,LTDEM,LTMSM,LTTS,NP2PDEM,NP2PMSM,NCOLLDEM,NCOLLMSM,BPTS,LTR0,LTR1,LTR2,LTR3,LTR4\n")
	for k := 100; k < 400; k++ {
		fmt.Fprintf(&g, "%d,%d,1000,2000,3000,0,0,0,500,0\n", k, 250000+(k%7)*100)
		c := 0
		if k%9 == 0 {
			c = 1
		}
		fmt.Fprintf(&n, "%d,250000,500,400,2000,0,0,%d,%d,1,1,1,0,0,0\n", k, c*2, c)
	}
	write(t, dir, "emds-global.csv", g.String())
	write(t, dir, "emds-node0.csv", n.String())
	write(t, dir, "manifest.json", `{"timeslice_ns": 250000}`)
	write(t, dir, "comm-matrix.csv", "src,dst,messages,bytes,class\n0,1,10,1000,user\n1,0,10,2000,user\n2,0,1,5,user\n")
	write(t, dir, "mmds-rank0-dist.csv", "metric,from,to,count\ncomm,100,199,5\ncomm,200,299,9\nMPI_Send.size,64,64,3\n")

	w, h := int(8*DPI), int(4*DPI)
	cases := []struct {
		name string
		run  func() ([]string, error)
		h    int
	}{
		{"getts", func() ([]string, error) { return GETTS(dir, dir, Range{}) }, h},
		{"ncoll-node0", func() ([]string, error) { return NCOLL(dir, dir, 0, Range{From: 150, To: 250}) }, 2 * h},
		{"lttr", func() ([]string, error) { return Metric(dir, dir, "LTTS", 0, Range{}) }, h},
		{"comm-matrix", func() ([]string, error) { return Matrix(dir, dir) }, h * 3 / 2},
		{"hist", func() ([]string, error) { return Histogram(dir, dir, 0, "comm") }, h},
		{"hist-size", func() ([]string, error) { return Histogram(dir, dir, 0, "MPI_Send.size") }, h},
	}
	for _, c := range cases {
		files, err := c.run()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(files) != 2 || !strings.HasSuffix(files[0], ".png") || !strings.HasSuffix(files[1], ".svg") {
			t.Fatalf("%s wrote %v", c.name, files)
		}
		checkPNG(t, files[0], w, c.h)
		svg, _ := os.ReadFile(files[1])
		if !strings.Contains(string(svg), "<svg") || len(svg) < 1000 {
			t.Fatalf("%s: SVG of %d bytes", c.name, len(svg))
		}
	}
}

func TestFigureErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := GETTS(dir, dir, Range{}); err == nil || !strings.Contains(err.Error(), "BCS_MDS=elan") {
		t.Fatalf("missing EMDS: %v", err)
	}
	write(t, dir, "emds-node0.csv", "slice,LTDEM\n1,2\n")
	if _, err := NCOLL(dir, dir, 0, Range{}); err == nil || !strings.Contains(err.Error(), "NCOLLDEM") {
		t.Fatalf("missing metric: %v", err)
	}
	write(t, dir, "emds-global.csv", "slice,GETTS\n1,2\n")
	if _, err := GETTS(dir, dir, Range{From: 10}); err == nil || !strings.Contains(err.Error(), "no slices recorded for GETTS in slices 10..0") {
		t.Fatalf("empty range: %v", err)
	}
	write(t, dir, "mmds-rank0-dist.csv", "metric,from,to,count\ncomm,1,2,3\n")
	if _, err := Histogram(dir, dir, 0, "MPI_Recv.latency"); err == nil || !strings.Contains(err.Error(), "it has comm") {
		t.Fatalf("missing distribution: %v", err)
	}
}
