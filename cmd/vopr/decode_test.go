package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/replica/wire/wiresample"
)

var update = flag.Bool("update", false, "rewrite testdata/sample.* from the current codec")

// vopr runs the command in-process.
func vopr(t *testing.T, stdin []byte, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, bytes.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestSampleStream: the bundled sample (what `make run` decodes) is exactly
// the wiresample stream, and decoding it prints the golden outputs.
func TestSampleStream(t *testing.T) {
	stream := wiresample.Stream()
	bin := filepath.Join("testdata", "sample.bin")
	if *update {
		if err := os.WriteFile(bin, stream, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	onDisk, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk, stream) {
		t.Fatalf("%s is stale: run go test ./cmd/vopr -update", bin)
	}
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"sample.txt", []string{"decode", bin}},
		{"sample.jsonl", []string{"decode", "-json", bin}},
	} {
		stdout, stderr, code := vopr(t, nil, tt.args...)
		if code != 0 || stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", tt.args, code, stderr)
		}
		path := filepath.Join("testdata", tt.golden)
		if *update {
			if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if stdout != string(want) {
			t.Errorf("%v differs from %s (run go test ./cmd/vopr -update and review the diff)", tt.args, path)
		}
	}
}

// TestDecodeJSONContract checks the documented keys and value forms on every
// frame of the sample.
func TestDecodeJSONContract(t *testing.T) {
	stdout, _, code := vopr(t, wiresample.Stream(), "decode", "-json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	frames := wiresample.Frames()
	if len(lines) != len(frames) {
		t.Fatalf("%d lines for %d frames", len(lines), len(frames))
	}
	keys := []string{"index", "offset", "command", "command_id", "size", "view", "release", "replica", "cluster",
		"checksum", "checksum_body", "valid", "error", "integrity", "fields"}
	offset := 0
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if len(m) != len(keys) {
			t.Errorf("line %d has %d keys, want %d", i, len(m), len(keys))
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("line %d lacks %q", i, k)
			}
		}
		h := wire.HeaderOf(frames[i])
		if m["index"] != float64(i) || m["offset"] != float64(offset) || m["command"] != h.Command().SnakeName() {
			t.Errorf("line %d: index %v offset %v command %v", i, m["index"], m["offset"], m["command"])
		}
		offset += len(frames[i])
		for _, k := range []string{"cluster", "checksum", "checksum_body"} {
			if s, _ := m[k].(string); len(s) != 34 || !strings.HasPrefix(s, "0x") {
				t.Errorf("line %d: %s = %v, want 0x and 32 hex digits", i, k, m[k])
			}
		}
		valid, _ := m["valid"].(bool)
		if valid != (m["error"] == "") {
			t.Errorf("line %d: valid %v with error %q", i, valid, m["error"])
		}
	}
	// Spot checks of the per-command fields.
	var hello, prepare, dvc, last map[string]any
	json.Unmarshal([]byte(lines[0]), &hello)
	json.Unmarshal([]byte(lines[4]), &prepare)
	json.Unmarshal([]byte(lines[11]), &dvc)
	json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	hf := hello["fields"].(map[string]any)
	if n, _ := hf["nonce"].(string); len(n) != 64 || hf["status"] != float64(0) {
		t.Errorf("hello fields %v", hf)
	}
	if prepare["command"] != "prepare" || prepare["integrity"] != "ok" {
		t.Errorf("prepare %v", prepare)
	}
	pf := prepare["fields"].(map[string]any)
	if pf["op"] != float64(1) || pf["operation"] != float64(1) || pf["group"] != float64(wire.MetadataGroup) {
		t.Errorf("prepare fields %v", pf)
	}
	df := dvc["fields"].(map[string]any)
	if s, ok := df["suffix"].([]any); dvc["command"] != "do_view_change" || !ok || len(s) != 2 {
		t.Errorf("dvc %v", dvc)
	}
	if last["valid"] != false || last["error"] != "not a replica-plane frame" {
		t.Errorf("pong line %v", last)
	}
}

func TestDecodeHexInput(t *testing.T) {
	stream := wiresample.Stream()[:2*wire.HeaderSize]
	text := hex.EncodeToString(stream)
	spaced := " " + text[:100] + "\n\t" + strings.ToUpper(text[100:300]) + "\r\n" + text[300:] + "\n"
	a, _, codeA := vopr(t, stream, "decode", "-json")
	b, _, codeB := vopr(t, []byte(spaced), "decode", "-json", "-hex")
	if codeA != 0 || codeB != 0 || a != b {
		t.Fatalf("hex input decoded differently: exit %d/%d", codeA, codeB)
	}
	_, stderr, code := vopr(t, []byte("00 0g"), "decode", "-hex")
	if code != 1 || !strings.Contains(stderr, "offset 4") {
		t.Errorf("bad hex digit: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = vopr(t, []byte("000"), "decode", "-hex")
	if code != 1 || !strings.Contains(stderr, "odd number") {
		t.Errorf("odd hex: exit %d, stderr %q", code, stderr)
	}
}

// TestDecodeFramingError: the frames before a framing error are printed, then
// one line on stderr, exit status 1.
func TestDecodeFramingError(t *testing.T) {
	frames := wiresample.Frames()
	good := append(append([]byte{}, frames[0]...), frames[1]...)
	tests := []struct {
		name string
		tail []byte
		want string
	}{
		{"truncated header", make([]byte, 100), "stream ends inside a frame"},
		{"truncated body", frames[9][:300], "stream ends inside a frame"},
		{"size below 256", func() []byte { f := append([]byte{}, frames[5]...); f[48], f[49] = 0xff, 0; return f }(), "size must be at least 256"},
		{"size above max", func() []byte { f := append([]byte{}, frames[5]...); f[51] = 0x10; return f }(), "maximum frame size"},
		{"command 30", func() []byte { f := append([]byte{}, frames[5]...); f[60] = 30; return f }(), "command must be 0..29"},
	}
	for _, tt := range tests {
		stdout, stderr, code := vopr(t, append(append([]byte{}, good...), tt.tail...), "decode", "-json")
		if code != 1 {
			t.Errorf("%s: exit %d, want 1", tt.name, code)
		}
		if n := strings.Count(stdout, "\n"); n != 2 {
			t.Errorf("%s: %d frames printed before the error, want 2", tt.name, n)
		}
		if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "offset 512") {
			t.Errorf("%s: stderr %q", tt.name, stderr)
		}
	}
}

func TestDecodeUsage(t *testing.T) {
	for _, args := range [][]string{
		{"decode", "-bogus"},
		{"decode", "a", "b"},
		{"decode", "-max-frame", "10"},
		{"nonsense"}, // no arguments at all now runs a random seed (cli_test.go)
	} {
		_, stderr, code := vopr(t, nil, args...)
		if code != 2 || !strings.Contains(stderr, "usage") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	if _, stderr, code := vopr(t, nil, "decode", filepath.Join(t.TempDir(), "missing")); code != 1 || stderr == "" {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr)
	}
	if stdout, _, code := vopr(t, nil, "decode"); code != 0 || stdout != "" {
		t.Errorf("empty input: exit %d, stdout %q", code, stdout)
	}
}
