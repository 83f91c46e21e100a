package plots

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/emds/kernel"
)

// MaxColumns bounds the slices a kernel figure draws one by one; longer
// ranges are drawn in bins of consecutive slices (the title says how many).
const MaxColumns = 600

// rowGrid is a heat map with ranks as rows and slice bins as columns.
type rowGrid struct {
	cols, rows int
	x0, dx     float64 // slice of column 0, slices per column
	z          []float64
}

func (g rowGrid) Dims() (int, int)   { return g.cols, g.rows }
func (g rowGrid) Z(c, r int) float64 { return g.z[r*g.cols+c] }
func (g rowGrid) X(c int) float64    { return g.x0 + g.dx*float64(c) }
func (g rowGrid) Y(r int) float64    { return float64(r) }
func (g rowGrid) Min() float64       { return 0 }
func (g rowGrid) Max() float64 {
	m := 1.0
	for _, v := range g.z {
		m = math.Max(m, v)
	}
	return m
}

// kernelRanks reads every rank's kernel series of dir, limited to r.
func kernelRanks(dir string) ([]*emds.Series, error) {
	ents, err := kernel.Entities(dir)
	if err != nil {
		return nil, err
	}
	var out []*emds.Series
	for _, e := range ents {
		if !strings.HasPrefix(e, "rank") {
			continue
		}
		s, err := kernel.ReadSeries(dir, e)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no rank in the kernel monitor's data of %s", dir)
	}
	return out, nil
}

// binning maps the slices of r that ss cover to at most MaxColumns columns.
func binning(ss []*emds.Series, r Range) (lo, hi uint64, per uint64, err error) {
	lo, hi = math.MaxUint64, 0
	for _, s := range ss {
		for _, k := range s.Slices {
			if r.has(k) {
				lo, hi = min(lo, k), max(hi, k)
			}
		}
	}
	if lo > hi {
		return 0, 0, 0, fmt.Errorf("no slices recorded in %d..%d", r.From, r.To)
	}
	per = (hi-lo)/MaxColumns + 1
	return lo, hi, per, nil
}

// KernelHeat draws the kernel monitor's rank × slice heat maps: time
// preempted per slice and mean wake-up latency per slice (µs).
func KernelHeat(dir, out string, r Range) ([]string, error) {
	ss, err := kernelRanks(dir)
	if err != nil {
		return nil, err
	}
	lo, hi, per, err := binning(ss, r)
	if err != nil {
		return nil, err
	}
	cols := int((hi-lo)/per) + 1
	pre := rowGrid{cols: cols, rows: len(ss), x0: float64(lo), dx: float64(per), z: make([]float64, cols*len(ss))}
	lat := pre
	lat.z = make([]float64, len(pre.z))
	wn := make([]float64, len(pre.z))
	n := make([]float64, len(pre.z))
	for row, s := range ss {
		p, _ := s.Col("PREEMPT")
		wl, _ := s.Col("WAKELAT")
		nw, _ := s.Col("NWAKE")
		for i, k := range s.Slices {
			if !r.has(k) {
				continue
			}
			c := row*cols + int((k-lo)/per)
			pre.z[c] += float64(p[i]) / 1e3
			n[c]++
			lat.z[c] += float64(wl[i]) / 1e3
			wn[c] += float64(nw[i])
		}
	}
	for i := range pre.z {
		if n[i] > 0 {
			pre.z[i] /= n[i]
		}
		if wn[i] > 0 {
			lat.z[i] /= wn[i]
		}
	}
	bin := ""
	if per > 1 {
		bin = fmt.Sprintf(", mean over bins of %d slices", per)
	}
	mk := func(g rowGrid, title string) *plot.Plot {
		p := plot.New()
		p.Title.Text = title + bin
		p.X.Label.Text = "time slice"
		p.Y.Label.Text = "rank"
		p.Add(plotter.NewHeatMap(g, moreland.SmoothBlueRed().Palette(64)))
		p.Y.Tick.Marker = plot.TickerFunc(func(_, _ float64) []plot.Tick {
			var ts []plot.Tick
			for k := 0; k < g.rows; k += max(1, g.rows/16) {
				ts = append(ts, plot.Tick{Value: float64(k), Label: strconv.Itoa(k)})
			}
			return ts
		})
		return p
	}
	return save(filepath.Join(out, "kernel-heat"), Height*2,
		mk(pre, fmt.Sprintf("Preempted time per slice (µs; max %.0f)", pre.Max())),
		mk(lat, fmt.Sprintf("Wake-up latency, mean per slice (µs; max %.0f)", lat.Max())))
}

// KernelStack draws, for one entity (rank<R>, master or runtime), each
// slice's time on CPU, runnable (waiting for a CPU) and the rest (blocked
// or asleep), stacked, in µs.
func KernelStack(dir, out, entity string, r Range) ([]string, error) {
	s, err := kernel.ReadSeries(dir, entity)
	if err != nil {
		return nil, err
	}
	lo, hi, per, err := binning([]*emds.Series{s}, r)
	if err != nil {
		return nil, err
	}
	cols := int((hi-lo)/per) + 1
	on, _ := s.Col("ONCPU")
	rq, _ := s.Col("RUNQ")
	dur := kernel.Durations(s, Timeslice(dir))
	vals := [3]plotter.Values{make(plotter.Values, cols), make(plotter.Values, cols), make(plotter.Values, cols)}
	n := make([]float64, cols)
	for i, k := range s.Slices {
		if !r.has(k) {
			continue
		}
		c := int((k - lo) / per)
		vals[0][c] += float64(on[i]) / 1e3
		vals[1][c] += float64(rq[i]) / 1e3
		vals[2][c] += float64(max(dur[i]-on[i]-rq[i], 0)) / 1e3
		n[c]++
	}
	for c := range n {
		for v := range vals {
			if n[c] > 0 {
				vals[v][c] /= n[c]
			}
		}
	}
	p := plot.New()
	bin := ""
	if per > 1 {
		bin = fmt.Sprintf(", mean over bins of %d slices", per)
	}
	p.Title.Text = fmt.Sprintf("%s: time per slice (µs), from slice %d%s", entity, lo, bin)
	p.X.Label.Text = fmt.Sprintf("time slice − %d", lo)
	if per > 1 {
		p.X.Label.Text = fmt.Sprintf("bin of %d slices from slice %d", per, lo)
	}
	p.Y.Label.Text = "µs"
	w := vg.Length(max(0.5, float64(Width)/float64(cols)*0.7))
	names := []string{"on CPU", "runnable (waiting for a CPU)", "blocked or asleep"}
	colors := []color.Color{color.RGBA{R: 30, G: 120, B: 200, A: 255}, color.RGBA{R: 220, G: 60, B: 40, A: 255}, color.RGBA{R: 200, G: 200, B: 200, A: 255}}
	var below *plotter.BarChart
	for v := range vals {
		b, err := plotter.NewBarChart(vals[v], w)
		if err != nil {
			return nil, err
		}
		b.Color, b.LineStyle.Width = colors[v], 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(names[v], b)
	}
	p.Legend.Top = true
	top := 0.0
	for c := range n {
		top = max(top, vals[0][c]+vals[1][c]+vals[2][c])
	}
	p.Y.Min, p.Y.Max = 0, top*1.35 // room for the legend above the bars
	p.Title.Text += "; runnable sums the entity's threads"
	return save(filepath.Join(out, "kernel-"+entity), Height, p)
}
