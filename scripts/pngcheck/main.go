// Command pngcheck fails on a blank screenshot: it decodes a PNG and
// requires more than a handful of distinct colours and a share of pixels
// other than the background (the most common colour). make timeline-check
// runs it on headless Chromium's screenshot of a timeline page, where a
// page that failed to render is one colour, or nearly.
//
//	pngcheck [-colors N] [-ink F] FILE.png
//
// It prints what it counted; exit 0 when the image passes, 1 when it is
// blank or unreadable, 2 for bad usage.
package main

import (
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pngcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	colors := fs.Int("colors", 16, "distinct colours required, at least")
	ink := fs.Float64("ink", 0.02, "share of pixels other than the background required, at least")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: pngcheck [-colors N] [-ink F] FILE.png")
		return 2
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "pngcheck: %v\n", err)
		return 1
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		fmt.Fprintf(stderr, "pngcheck: %s: %v\n", fs.Arg(0), err)
		return 1
	}
	s := measure(img)
	fmt.Fprintf(stdout, "pngcheck: %s: %dx%d, %d colours, %.1f%% of pixels not the background\n",
		fs.Arg(0), s.width, s.height, s.colors, 100*s.ink)
	if s.colors < *colors || s.ink < *ink {
		fmt.Fprintf(stderr, "pngcheck: %s looks blank: want at least %d colours and %.1f%% of pixels not the background\n",
			fs.Arg(0), *colors, 100**ink)
		return 1
	}
	return 0
}

// stats is what measure counts.
type stats struct {
	width, height int
	colors        int     // distinct colours
	ink           float64 // the share of pixels not the most common colour
}

func measure(img image.Image) stats {
	b := img.Bounds()
	counts := map[[4]uint32]int{} // counted only; the result does not depend on its order
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			counts[[4]uint32{r, g, bl, a}]++
		}
	}
	most, total := 0, b.Dx()*b.Dy()
	for _, n := range counts {
		most = max(most, n)
	}
	s := stats{width: b.Dx(), height: b.Dy(), colors: len(counts)}
	if total > 0 {
		s.ink = float64(total-most) / float64(total)
	}
	return s
}
