// Package plots draws MDS data with gonum/plot: any EMDS series against slice
// number (the paper's Figures 5 and 6), the communication matrix as a heat map,
// and MMDS distributions as histograms. Every figure is written as PNG and SVG.
// It only reads dump files; the runtime never imports it.
package plots

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/bcsmpi/bcsmpi/emds"
)

// Size of every figure.
const (
	Width  = 8 * vg.Inch
	Height = 4 * vg.Inch
	DPI    = 96
)

// Series reads an EMDS file of dir: node < 0 is the global file.
func Series(dir string, node int) (*emds.Series, string, error) {
	name := "emds-global.csv"
	if node >= 0 {
		name = fmt.Sprintf("emds-node%d.csv", node)
	}
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if err != nil {
		return nil, path, fmt.Errorf("%w (was the job run with BCS_MDS=elan?)", err)
	}
	defer f.Close()
	s, err := emds.ReadCSV(bufio.NewReader(f))
	if err != nil {
		return nil, path, fmt.Errorf("%s: %w", path, err)
	}
	return s, path, nil
}

// Timeslice reads the slice length (ns) from dir's manifest, or 0.
func Timeslice(dir string) int64 {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return 0
	}
	var m struct {
		T int64 `json:"timeslice_ns"`
	}
	json.Unmarshal(b, &m)
	return m.T
}

var timeMetric = map[string]bool{"GETTS": true, "GTDEM": true, "GTMSM": true, "GTTS": true, "LATE": true,
	"LETTS": true, "LTDEM": true, "LTMSM": true, "LTTS": true, "LTR0": true, "LTR1": true, "LTR2": true, "LTR3": true, "LTR4": true,
	"SWITCHNS": true}

// Range limits a figure to slices [From, To] (To 0: to the end).
type Range struct{ From, To uint64 }

func (r Range) has(k uint64) bool { return k >= r.From && (r.To == 0 || k <= r.To) }

// seriesPlot plots one metric against slice number; times are shown in µs,
// counts as steps (one per slice).
func seriesPlot(s *emds.Series, metric, title string, r Range) (*plot.Plot, error) {
	col, err := s.Col(metric)
	if err != nil {
		return nil, err
	}
	scale, unit := 1.0, ""
	timed := timeMetric[strings.ToUpper(metric)]
	if timed {
		scale, unit = 1e-3, " (µs)"
	}
	var pts plotter.XYs
	for i, v := range col {
		if r.has(s.Slices[i]) {
			pts = append(pts, plotter.XY{X: float64(s.Slices[i]), Y: float64(v) * scale})
		}
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("no slices recorded for %s in slices %d..%d", metric, r.From, r.To)
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "time slice"
	p.Y.Label.Text = strings.ToUpper(metric) + unit
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	l.Color = color.RGBA{B: 200, A: 255}
	if !timed {
		l.StepStyle = plotter.MidStep
	}
	p.Add(l, plotter.NewGrid())
	return p, nil
}

// save writes plots stacked vertically to base.png and base.svg.
func save(base string, h vg.Length, ps ...*plot.Plot) ([]string, error) {
	tiles := draw.Tiles{Rows: len(ps), Cols: 1, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	grid := make([][]*plot.Plot, len(ps))
	for i, p := range ps {
		grid[i] = []*plot.Plot{p}
	}
	var out []string
	for _, ext := range []string{".png", ".svg"} {
		var c interface {
			vg.CanvasSizer
		}
		var write func(*os.File) error
		if ext == ".png" {
			img := vgimg.NewWith(vgimg.UseWH(Width, h), vgimg.UseDPI(DPI))
			c = img
			write = func(f *os.File) error { _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); return err }
		} else {
			svg := vgsvg.New(Width, h)
			c = svg
			write = func(f *os.File) error { _, err := svg.WriteTo(f); return err }
		}
		dc := draw.New(c)
		for i, cs := range plot.Align(grid, tiles, dc) {
			grid[i][0].Draw(cs[0])
		}
		f, err := os.Create(base + ext)
		if err != nil {
			return nil, err
		}
		if err := write(f); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		out = append(out, base+ext)
	}
	return out, nil
}

// GETTS draws the paper's Figure 5: global elapsed time between strobes.
func GETTS(dir, out string, r Range) ([]string, error) {
	s, _, err := Series(dir, -1)
	if err != nil {
		return nil, err
	}
	p, err := seriesPlot(s, "GETTS", "Global Elapsed Time from the previous Time Slice (GETTS)", r)
	if err != nil {
		return nil, err
	}
	if ts := Timeslice(dir); ts > 0 {
		ref, _ := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: float64(ts) / 1e3}, {X: p.X.Max, Y: float64(ts) / 1e3}})
		ref.Color = color.RGBA{R: 200, A: 255}
		ref.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
		p.Add(ref)
		p.Legend.Add("time slice", ref)
		p.Legend.Top = true
	}
	return save(filepath.Join(out, "getts"), Height, p)
}

// NCOLL draws the paper's Figure 6 for one node: collectives processed in DEM
// (a) and scheduled in MSM (b).
func NCOLL(dir, out string, node int, r Range) ([]string, error) {
	s, _, err := Series(dir, node)
	if err != nil {
		return nil, err
	}
	a, err := seriesPlot(s, "NCOLLDEM", fmt.Sprintf("(a) Collectives processed in the DEM microphase, node %d", node), r)
	if err != nil {
		return nil, err
	}
	b, err := seriesPlot(s, "NCOLLMSM", fmt.Sprintf("(b) Collectives scheduled in the MSM microphase, node %d", node), r)
	if err != nil {
		return nil, err
	}
	return save(filepath.Join(out, fmt.Sprintf("ncoll-node%d", node)), 2*Height, a, b)
}

// Metric draws any EMDS metric (global if node < 0).
func Metric(dir, out, metric string, node int, r Range) ([]string, error) {
	s, _, err := Series(dir, node)
	if err != nil {
		return nil, err
	}
	where := "global"
	if node >= 0 {
		where = fmt.Sprintf("node %d", node)
	}
	p, err := seriesPlot(s, metric, fmt.Sprintf("%s, %s", strings.ToUpper(metric), where), r)
	if err != nil {
		return nil, err
	}
	name := strings.ToLower(metric)
	if node >= 0 {
		name += fmt.Sprintf("-node%d", node)
	}
	return save(filepath.Join(out, name), Height, p)
}

type grid struct {
	n int
	z []float64
}

func (g grid) Dims() (int, int)   { return g.n, g.n }
func (g grid) Z(c, r int) float64 { return g.z[r*g.n+c] }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }
func (g grid) Min() float64       { return 0 }
func (g grid) Max() float64 {
	m := 1.0
	for _, v := range g.z {
		m = math.Max(m, v)
	}
	return m
}

// Matrix draws the communication matrix (bytes from source to destination).
func Matrix(dir, out string) ([]string, error) {
	path := filepath.Join(dir, "comm-matrix.csv")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w (was the job run with BCS_MDS=elan?)", err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 || strings.Join(recs[0], ",") != "src,dst,messages,bytes,class" {
		return nil, fmt.Errorf("%s: not a communication matrix (%v)", path, err)
	}
	n := 0
	type cell struct {
		s, d int
		b    float64
	}
	var cells []cell
	for i, r := range recs[1:] {
		s, e1 := strconv.Atoi(r[0])
		d, e2 := strconv.Atoi(r[1])
		b, e3 := strconv.ParseFloat(r[3], 64)
		if e1 != nil || e2 != nil || e3 != nil || s < 0 || d < 0 || s > 1<<16 || d > 1<<16 {
			return nil, fmt.Errorf("%s line %d: bad row %q", path, i+2, strings.Join(r, ","))
		}
		n = max(n, s+1, d+1)
		cells = append(cells, cell{s, d, b})
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no point-to-point traffic recorded", path)
	}
	g := grid{n: n, z: make([]float64, n*n)}
	for _, c := range cells {
		g.z[c.d*n+c.s] += c.b // row = destination, column = source
	}
	p := plot.New()
	p.Title.Text = "Communication matrix (bytes, point-to-point and collectives)"
	p.X.Label.Text = "source rank"
	p.Y.Label.Text = "destination rank"
	p.Add(plotter.NewHeatMap(g, moreland.SmoothBlueRed().Palette(64)))
	ranks := plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		var ts []plot.Tick
		step := max(1, n/16)
		for r := 0; r < n; r += step {
			ts = append(ts, plot.Tick{Value: float64(r), Label: strconv.Itoa(r)})
		}
		return ts
	})
	p.X.Tick.Marker, p.Y.Tick.Marker = ranks, ranks
	return save(filepath.Join(out, "comm-matrix"), Height*3/2, p)
}

// Histogram draws one MMDS distribution of a rank (tag like "comm",
// "comp", "MPI_Send.latency") from its -dist.csv file.
func Histogram(dir, out string, rank int, tag string) ([]string, error) {
	path := filepath.Join(dir, fmt.Sprintf("mmds-rank%d-dist.csv", rank))
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w (was the job run with BCS_MDS=main?)", err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 || strings.Join(recs[0], ",") != "metric,from,to,count" {
		return nil, fmt.Errorf("%s: not an MMDS distribution file (%v)", path, err)
	}
	var bins []plotter.HistogramBin
	tags := map[string]bool{}
	for _, r := range recs[1:] {
		tags[r[0]] = true
		if r[0] != tag {
			continue
		}
		from, _ := strconv.ParseFloat(r[1], 64)
		to, _ := strconv.ParseFloat(r[2], 64)
		cnt, _ := strconv.ParseFloat(r[3], 64)
		bins = append(bins, plotter.HistogramBin{Min: from, Max: to + 1, Weight: cnt})
	}
	if len(bins) == 0 {
		var have []string
		for t := range tags {
			have = append(have, t)
		}
		return nil, fmt.Errorf("%s has no distribution %q; it has %s", path, tag, strings.Join(have, ", "))
	}
	unit, scale := "bytes", 1.0
	if !strings.HasSuffix(tag, ".size") {
		unit, scale = "ms", 1e-6
	}
	for i := range bins {
		bins[i].Min *= scale
		bins[i].Max *= scale
	}
	h := &plotter.Histogram{Bins: bins, FillColor: color.RGBA{B: 180, G: 120, A: 255}, LineStyle: plotter.DefaultLineStyle}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Rank %d: %s distribution", rank, tag)
	p.X.Label.Text = unit
	p.Y.Label.Text = "count"
	p.Add(h)
	return save(filepath.Join(out, fmt.Sprintf("hist-rank%d-%s", rank, strings.ReplaceAll(tag, ".", "-"))), Height, p)
}
