package wire

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
)

// TestIndependentTools replays testdata/independent/results.txt, values that
// xxhsum -H3 and b3sum computed over inputs built from wire.md's byte layouts
// (see generate.sh there), against our hashing, and checks that our encoders
// produce exactly those inputs.
func TestIndependentTools(t *testing.T) {
	dir := filepath.Join("testdata", "independent")
	f, err := os.Open(filepath.Join(dir, "results.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	checked := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cmd, ok := strings.CutPrefix(sc.Text(), "$ ")
		if !ok {
			continue
		}
		if !sc.Scan() {
			t.Fatalf("no output after %q", cmd)
		}
		out := sc.Text()
		args := strings.Fields(cmd)
		file := args[len(args)-1]
		switch {
		case args[0] == "xxhsum":
			_, sum, _ := strings.Cut(out, " = ")
			want, err := strconv.ParseUint(sum, 16, 64)
			if err != nil {
				t.Fatalf("%q: bad output %q", cmd, out)
			}
			if got := xxh3.Hash(read(file)); got != want {
				t.Errorf("%s: XXH3 %#x, xxhsum %#x", cmd, got, want)
			}
		case args[0] == "b3sum" && args[1] == "--keyed":
			file = args[2]
			mode, dir, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(file, "transcript-"), ".bin"), "-")
			tr := b3Transcript(mode == "tls")
			d := MACDialer
			if dir == "acceptor" {
				d = MACAcceptor
			}
			msg := tr.Bytes(d)
			if !bytes.Equal(msg[:], read(file)) {
				t.Errorf("%s: our transcript differs from the file\n ours %x\n file %x", cmd, msg, read(file))
			}
			key := DeriveMACKey([]byte(b3Secret))
			if !bytes.Equal(key[:], read("mac-key.bin")) {
				t.Errorf("mac-key.bin differs from DeriveMACKey")
			}
			if got := tr.MAC(key, d); got.String() != strings.Fields(out)[0] {
				t.Errorf("%s: MAC %s, b3sum %s", cmd, got, out)
			}
		case args[0] == "b3sum" && args[1] == "--derive-key":
			if got := DeriveMACKey(read(file)); got.String() != strings.Fields(out)[0] {
				t.Errorf("%s: key %s, b3sum %s", cmd, got, out)
			}
		case args[0] == "b3sum":
			id := ClusterID(string(read(file)))
			var b [16]byte
			putU128(b[:], id)
			if got := hex.EncodeToString(b[:]); got != strings.Fields(out)[0][:32] {
				t.Errorf("%s: cluster id %s, b3sum %s", cmd, got, out)
			}
		default:
			t.Fatalf("unknown command %q", cmd)
		}
		checked++
	}
	if checked != 19 {
		t.Fatalf("checked %d results, want 19", checked)
	}

	// The inputs are what our encoders produce.
	b4 := ForwardRegisterHeader{Prefix: Prefix{Cluster: U128From64(7), View: 3, Replica: 2},
		Client: U128From64(0xCAFE), Nonce: U128From64(0xF00D), UserID: 41}
	if frame := BuildFrame(&b4, nil); !bytes.Equal(frame, read("b4-header.bin")) {
		t.Errorf("B4 header differs from b4-header.bin")
	}
	p := b6Prepare()
	prepare := BuildFrame(&p, nil)
	if !bytes.Equal(prepare, read("b6-header.bin")) {
		t.Errorf("B6 header differs from b6-header.bin")
	}
	dvc := DoViewChangeHeader{Prefix: Prefix{Cluster: ClusterID("iggy-cluster"), View: 1, Replica: 1},
		Op: 1, Group: MetadataGroup, PresentBitset: U128{}.WithBit(0)}
	frame := BuildFrame(&dvc, prepare)
	if !bytes.Equal(frame[16:HeaderSize], read("b7-seal-input.bin")) {
		t.Errorf("B7 header bytes 16..256 differ from b7-seal-input.bin")
	}
	for _, c := range []Command{7, 9, 10, 11, 12, 17} {
		var h Header
		h.SetSize(HeaderSize)
		h.SetCommand(c)
		name := "b5-cmd" + hex.EncodeToString([]byte{byte(c)}) + "-seal-input.bin"
		if !bytes.Equal(h[16:], read(name)) {
			t.Errorf("%s differs from a minimal %v header", name, c)
		}
	}
}
