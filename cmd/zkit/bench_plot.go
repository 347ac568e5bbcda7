package main

import (
	"image/color"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/zkit-dev/zkit/cmd/zkit/internal/workload"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plotResults draws one panel per workload, operations/s against clients,
// one line per implementation, into a PNG file.
// checkWritable makes sure that file can be written, before a run that
// would write it at its end: it creates it if missing, and removes what it
// created.
func checkWritable(file string) error {
	_, statErr := os.Stat(file)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	if os.IsNotExist(statErr) {
		os.Remove(file)
	}
	return nil
}

func plotResults(file string, results []*workload.Result) error {
	var workloads []string
	for _, r := range results {
		if !slices.Contains(workloads, r.Workload) {
			workloads = append(workloads, r.Workload)
		}
	}
	panels := make([][]*plot.Plot, len(workloads))
	for i, w := range workloads {
		p, err := workloadPlot(w, results)
		if err != nil {
			return err
		}
		panels[i] = []*plot.Plot{p}
	}
	const width, rowHeight = 16 * vg.Centimeter, 9 * vg.Centimeter
	img := vgimg.New(width, rowHeight*vg.Length(len(panels)))
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Centimeter / 2}
	canvases := plot.Align(panels, tiles, dc)
	for i := range panels {
		panels[i][0].Draw(canvases[i][0])
	}
	return saveImage(img, file)
}

func workloadPlot(w string, results []*workload.Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = w
	p.X.Label.Text = "clients"
	p.Y.Label.Text = "operations/s"
	p.Y.Min = 0
	p.Legend.Top = true
	byImpl := map[string]plotter.XYs{}
	var impls []string
	var ticks []plot.Tick
	top := 0.0
	for _, r := range results {
		if r.Workload != w {
			continue
		}
		top = max(top, r.Rate())
		if !slices.ContainsFunc(ticks, func(t plot.Tick) bool { return t.Value == float64(r.Clients) }) {
			ticks = append(ticks, plot.Tick{Value: float64(r.Clients), Label: strconv.Itoa(r.Clients)})
		}
		if _, ok := byImpl[r.Impl]; !ok {
			impls = append(impls, r.Impl)
		}
		byImpl[r.Impl] = append(byImpl[r.Impl], plotter.XY{X: float64(r.Clients), Y: r.Rate()})
	}
	for i, impl := range impls {
		line, points, err := plotter.NewLinePoints(byImpl[impl])
		if err != nil {
			return nil, err
		}
		line.Color = plotutil.Color(i)
		line.Width = vg.Points(2)
		points.Color = line.Color
		points.Shape = plotutil.Shape(i)
		if !strings.HasPrefix(impl, "zkit.") {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(line, points)
		p.Legend.Add(impl, line, points)
	}
	p.Add(plotter.NewGrid())
	p.Y.Max = 1.4 * top // room for the legend above the lines
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if len(ticks) > 1 {
		p.X.Scale = plot.LogScale{}
	}
	return p, nil
}

func saveImage(img *vgimg.Canvas, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
