package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
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
	keys := []string{"schema", "index", "offset", "command", "command_id", "size", "view", "release", "replica", "cluster",
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
		if m["schema"] != float64(jsonSchema) {
			t.Errorf("line %d: schema %v, want %d", i, m["schema"], jsonSchema)
		}
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

// fieldKeys returns the keys of a JSON line's "fields" object in the order
// printed: the order is part of the contract (wire.md section 5's tables).
func fieldKeys(t *testing.T, line string) []string {
	t.Helper()
	var m struct{ Fields json.RawMessage }
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("%v in %s", err, line)
	}
	dec := json.NewDecoder(bytes.NewReader(m.Fields))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("fields is not an object: %s", m.Fields)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// rawRequest is a Request (5) written byte by byte at the offsets of wire.md
// 5.20, so that the decoder is checked against the table, not against our
// encoder.
func rawRequest(operation byte, session, request uint64, commandCode uint32, group uint64) []byte {
	f := make([]byte, wire.HeaderSize)
	binary.LittleEndian.PutUint32(f[48:], wire.HeaderSize) // size
	f[60] = 5                                              // command
	f[128] = 0x2a                                          // client
	binary.LittleEndian.PutUint64(f[168:], request)
	f[176] = operation
	binary.LittleEndian.PutUint64(f[184:], session)
	binary.LittleEndian.PutUint32(f[196:], commandCode)
	binary.LittleEndian.PutUint64(f[248:], group)
	return f
}

// TestDecodeFrameCases covers decode paths the sample stream does not reach.
func TestDecodeFrameCases(t *testing.T) {
	const zero128 = "0x00000000000000000000000000000000"
	requestKeys := []string{"client", "request_checksum", "timestamp", "request", "operation", "session", "user_id"}

	unsealedPrepare := func() []byte {
		// A metadata prepare whose identity and body seal are both left
		// zero: the unsealed sentinel of wire.md 3.3/3.4, which a receiver
		// skips rather than rejects.
		p := wire.PrepareHeader{Prefix: wire.Prefix{Command: wire.CommandPrepare}, Client: wire.U128From64(0x2a), Op: 1, Timestamp: 1,
			Operation: wire.OperationRegister, Group: wire.MetadataGroup, UserID: 1}
		f := make([]byte, wire.HeaderSize)
		h := wire.HeaderOf(f)
		p.Encode(h)
		h.SetSize(wire.HeaderSize)
		return f
	}
	emptyDVC := func() []byte {
		x := wire.DoViewChangeHeader{Prefix: wire.Prefix{View: 1, Replica: 1}, Op: 1, Group: wire.MetadataGroup}
		return wire.BuildFrame(&x, nil)
	}
	// XXH3 of nothing (wire.md 12.B1): what a sender applying the metadata
	// prepare regime to an empty DVC body would write, the empty-body trap.
	trap := wire.U128From64(0x2d06800538d394c2)

	cases := []struct {
		name         string
		frame        []byte
		valid        bool
		errRule      wire.Rule // the rule the error must name when !valid
		integrity    string
		checksumBody string   // "" skips the check
		keys         []string // nil skips the check
		fields       map[string]any
	}{
		{
			name: "NonReplicated request shows command_code", frame: rawRequest(2, 3, 9, 1, 0),
			valid: true, integrity: "none",
			keys:   append(slices.Clone(requestKeys), "command_code"),
			fields: map[string]any{"operation": float64(2), "command_code": float64(1), "session": float64(3)},
		},
		{
			name: "Register request has neither command_code nor group", frame: rawRequest(1, 0, 0, 0, 0),
			valid: true, integrity: "none", keys: requestKeys,
		},
		{
			name: "replicated request with garbage in the command code bytes hides them", frame: rawRequest(128, 3, 9, 7, 0),
			valid: true, integrity: "none", keys: requestKeys,
		},
		{
			name: "routed request shows its group", frame: rawRequest(128, 3, 9, 0, wire.MetadataGroup),
			valid: true, integrity: "none", keys: append(slices.Clone(requestKeys), "group"),
			fields: map[string]any{"group": float64(wire.MetadataGroup)},
		},
		{
			name: "prepare with zero identity and zero body seal", frame: unsealedPrepare(),
			valid: true, integrity: "none", checksumBody: zero128,
		},
		{
			// wire.md 3.4: an empty DVC body carries zero.
			name: "empty DoViewChange", frame: emptyDVC(),
			valid: true, integrity: "ok", checksumBody: zero128,
		},
		{
			// wire.md 3.4: keyed on body presence, an empty body is accepted
			// whatever checksum_body says, so long as the seal covers it.
			name: "empty DoViewChange carrying XXH3 of nothing, resealed",
			frame: func() []byte {
				f := emptyDVC()
				h := wire.HeaderOf(f)
				h.SetChecksumBody(trap)
				h.SealFrame()
				return f
			}(),
			valid: true, integrity: "ok", checksumBody: "0x00000000000000002d06800538d394c2",
		},
		{
			name: "empty DoViewChange given a checksum_body after sealing",
			frame: func() []byte {
				f := emptyDVC()
				wire.HeaderOf(f).SetChecksumBody(trap)
				return f
			}(),
			valid: false, errRule: wire.ErrSealMismatch, integrity: "mismatch",
			checksumBody: "0x00000000000000002d06800538d394c2",
		},
		{
			// The converse is corruption: a body with a zero checksum_body.
			name: "DoViewChange with a body and a zero checksum_body",
			frame: func() []byte {
				x := wire.DoViewChangeHeader{Prefix: wire.Prefix{View: 1, Replica: 1}, Op: 1, Group: wire.MetadataGroup}
				f := wire.BuildFrame(&x, wire.EncodeSuffix([]wire.Header{wire.BlankEntry(1)}))
				h := wire.HeaderOf(f)
				h.SetChecksumBody(wire.U128{})
				h.SealFrame()
				return f
			}(),
			valid: false, errRule: wire.ErrBodySealMismatch, integrity: "mismatch", checksumBody: zero128,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := vopr(t, c.frame, "decode", "-json")
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			line := strings.TrimSuffix(stdout, "\n")
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("%v in %q", err, stdout)
			}
			if m["valid"] != c.valid {
				t.Errorf("valid %v (error %q), want %v", m["valid"], m["error"], c.valid)
			}
			errText, _ := m["error"].(string)
			if c.valid && errText != "" {
				t.Errorf("error %q on a valid frame", errText)
			}
			if !c.valid && !strings.HasPrefix(errText, c.errRule.Error()) {
				t.Errorf("error %q, want the rule %q", errText, c.errRule.Error())
			}
			if m["integrity"] != c.integrity {
				t.Errorf("integrity %v, want %s", m["integrity"], c.integrity)
			}
			if c.checksumBody != "" && m["checksum_body"] != c.checksumBody {
				t.Errorf("checksum_body %v, want %s", m["checksum_body"], c.checksumBody)
			}
			if c.keys != nil {
				if got := fieldKeys(t, line); !slices.Equal(got, c.keys) {
					t.Errorf("fields %v, want %v", got, c.keys)
				}
			}
			fields, _ := m["fields"].(map[string]any)
			for k, want := range c.fields {
				if fields[k] != want {
					t.Errorf("fields.%s = %v, want %v", k, fields[k], want)
				}
			}
		})
	}
}
