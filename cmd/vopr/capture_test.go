package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire/wiresample"
	"github.com/iggy-vopr/vopr/sim"
	"github.com/zeebo/xxh3"
)

// captureRecord builds one -capture record (sim/capture.go) by hand.
func captureRecord(atNs int64, from, to uint8, frame []byte) []byte {
	b := append([]byte(nil), sim.CaptureRecordMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(frame)))
	b = binary.LittleEndian.AppendUint64(b, uint64(atNs))
	b = append(b, from, to, 0, 0)
	h := xxh3.New()
	h.Write(b[8:])
	h.Write(frame)
	b = binary.LittleEndian.AppendUint64(b, h.Sum64())
	return append(b, frame...)
}

// TestDecodeCaptureOfAPartitionRun: vopr decode reads a -capture of a run
// whose workload sends and polls messages: every record decodes, each with
// its delivery time and path, SendMessages prepares among them with their
// batch summaries.
func TestDecodeCaptureOfAPartitionRun(t *testing.T) {
	// The first swarm seed that sends and commits messages (the seeds'
	// worlds move with the code, so the test finds one).
	var o sim.Options
	var res sim.Result
	var capture bytes.Buffer
	for seed := uint64(1); seed <= 100 && res.Messages == 0; seed++ {
		if o = sim.Swarm(seed); !o.Sends {
			continue
		}
		capture.Reset()
		if res = sim.RunWith(o, sim.Outputs{Capture: &capture}); res.Outcome != sim.Pass {
			t.Fatalf("seed %d failed: %s: %s", seed, res.Summary(), res.Violation)
		}
	}
	if res.Messages == 0 {
		t.Fatal("no swarm seed in 1..100 commits messages")
	}
	if plain := sim.Run(o, nil); plain.Digest != res.Digest {
		t.Fatalf("a captured run has digest %016x, a plain one %016x", res.Digest, plain.Digest)
	}
	stdout, stderr, code := vopr(t, capture.Bytes(), "decode", "-json")
	if code != 0 {
		t.Fatalf("decode exit %d: %s", code, stderr)
	}
	frames, batches := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var rep struct {
			Command string         `json:"command"`
			Valid   bool           `json:"valid"`
			AtNs    *int64         `json:"at_ns"`
			From    *int           `json:"from"`
			To      *int           `json:"to"`
			Fields  map[string]any `json:"fields"`
		}
		if err := json.Unmarshal([]byte(line), &rep); err != nil {
			t.Fatal(err)
		}
		frames++
		if rep.AtNs == nil || rep.From == nil || rep.To == nil || *rep.From == *rep.To {
			t.Fatalf("frame %d without its delivery: %s", frames, line)
		}
		if rep.Command == "prepare" && rep.Fields["batch"] != nil {
			batches++
		}
	}
	if frames < 100 || batches == 0 {
		t.Fatalf("%d frames, %d SendMessages prepares decoded", frames, batches)
	}
}

// TestDecodeCaptureKeepsStep: a frame whose size field a fault corrupted is
// one invalid frame (its record says how long it is), and the next record
// decodes; a damaged record stops the decoding with its index and offset.
func TestDecodeCaptureKeepsStep(t *testing.T) {
	frames := wiresample.Frames()
	bad := append([]byte(nil), frames[5]...)
	bad[48] ^= 0x10 // the size field
	capture := []byte(sim.CaptureMagic)
	capture = append(capture, captureRecord(1000, 0, 1, bad)...)
	capture = append(capture, captureRecord(2000, 1, 2, frames[6])...)
	stdout, stderr, code := vopr(t, capture, "decode", "-json")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("exit %d, %d frames: %s %s", code, len(lines), stdout, stderr)
	}
	var first, second struct {
		Valid bool  `json:"valid"`
		AtNs  int64 `json:"at_ns"`
	}
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[1]), &second)
	if first.Valid || !second.Valid || second.AtNs != 2000 {
		t.Fatalf("first valid %v, second valid %v at %d: want the corrupt frame invalid and the next one read", first.Valid, second.Valid, second.AtNs)
	}
	damaged := append([]byte(nil), capture...)
	damaged[len(damaged)-1] ^= 1 // the second record's last frame byte
	_, stderr, code = vopr(t, damaged, "decode")
	if code != 1 || !strings.Contains(stderr, "capture record 1") || !strings.Contains(stderr, "checksum") {
		t.Fatalf("a damaged record: exit %d, stderr %q", code, stderr)
	}
}
