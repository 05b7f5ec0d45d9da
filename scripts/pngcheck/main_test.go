package main

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writePNG(t *testing.T, img image.Image) string {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "shot.png")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A white page fails, and so does one with a few specks; a page with
// lanes of many colours passes.
func TestBlankFailsDrawnPasses(t *testing.T) {
	white := image.NewRGBA(image.Rect(0, 0, 200, 100))
	for i := range white.Pix {
		white.Pix[i] = 0xff
	}
	specks := image.NewRGBA(white.Bounds())
	copy(specks.Pix, white.Pix)
	for i := range 30 {
		specks.Set(i, 0, color.RGBA{uint8(i * 8), 0, 0, 255})
	}
	drawn := image.NewRGBA(white.Bounds())
	copy(drawn.Pix, white.Pix)
	for y := 10; y < 90; y++ {
		for x := 20; x < 180; x++ {
			drawn.Set(x, y, color.RGBA{uint8(x), uint8(y * 2), uint8((x + y) % 7 * 30), 255})
		}
	}
	for _, tc := range []struct {
		name string
		img  image.Image
		code int
	}{{"white", white, 1}, {"specks", specks, 1}, {"drawn", drawn, 0}} {
		var out, errOut bytes.Buffer
		if code := run([]string{writePNG(t, tc.img)}, &out, &errOut); code != tc.code {
			t.Errorf("%s: exit %d, want %d: %s%s", tc.name, code, tc.code, out.String(), errOut.String())
		}
	}
	var errOut bytes.Buffer
	if code := run([]string{filepath.Join(t.TempDir(), "none.png")}, &bytes.Buffer{}, &errOut); code != 1 || !strings.Contains(errOut.String(), "none.png") {
		t.Errorf("a missing file: exit %d, %q", code, errOut.String())
	}
}
