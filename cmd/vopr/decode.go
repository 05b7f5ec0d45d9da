package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim"
	"github.com/zeebo/xxh3"
)

// runDecode implements `vopr decode`.
func runDecode(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("decode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per frame, one per line")
	asHex := fs.Bool("hex", false, "read the input as hex text (whitespace ignored)")
	maxFrame := fs.Uint("max-frame", wire.MaxFrameSizeDefault, "largest frame `BYTES` accepted (message_bus.max_message_size)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: vopr decode [-json] [-hex] [-max-frame BYTES] [FILE]")
		fmt.Fprintln(stderr, "Reads concatenated replica-port frames, or a vopr -capture file, from FILE (or stdin)")
		fmt.Fprintln(stderr, "and prints every frame.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(stderr, "vopr decode: one input file at most, got %d\n", fs.NArg())
		fs.Usage()
		return 2
	}
	if *maxFrame < wire.HeaderSize || *maxFrame > 1<<32-1 {
		fmt.Fprintf(stderr, "vopr decode: -max-frame must be 256..4294967295, got %d\n", *maxFrame)
		fs.Usage()
		return 2
	}

	var src io.Reader = stdin
	name := "stdin"
	if fs.NArg() == 1 {
		name = fs.Arg(0)
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(stderr, "vopr decode: %v\n", err)
			return 1
		}
		defer f.Close()
		src = f
	}
	if *asHex {
		raw, err := io.ReadAll(src)
		if err != nil {
			fmt.Fprintf(stderr, "vopr decode: reading %s: %v\n", name, err)
			return 1
		}
		b, err := decodeHexText(raw)
		if err != nil {
			fmt.Fprintf(stderr, "vopr decode: %s: %v\n", name, err)
			return 1
		}
		src = bytes.NewReader(b)
	}

	out := bufio.NewWriter(stdout)
	defer out.Flush()
	in := bufio.NewReader(src)
	if magic, _ := in.Peek(len(sim.CaptureMagic)); string(magic) == sim.CaptureMagic {
		return decodeCapture(in, name, *asJSON, uint32(*maxFrame), out, stderr)
	}
	r := wire.NewReader(in, uint32(*maxFrame))
	for index := 0; ; index++ {
		// A write error (stdout full or closed) ends the decoding: the rest
		// would be lost too. bufio keeps the error, and an empty Write
		// returns it; runEnv reports it and exits 1.
		if _, err := out.Write(nil); err != nil {
			return 1
		}
		frame, offset, err := r.Next()
		if err == io.EOF {
			if out.Flush() != nil {
				return 1
			}
			return 0
		}
		if err != nil {
			out.Flush()
			fmt.Fprintf(stderr, "vopr decode: %s: %v\n", name, err)
			return 1
		}
		report := describe(index, offset, frame)
		if *asJSON {
			line, err := json.Marshal(report)
			if err != nil {
				panic(err) // every value is a plain number, string or bool
			}
			out.Write(line)
			out.WriteByte('\n')
		} else {
			report.writeText(out)
		}
	}
}

// decodeCapture prints the frames of a -capture file (sim/capture.go):
// record after record by the record's own length, so a frame whose size
// field is corrupt stays one frame (reported invalid), and a record whose
// magic or checksum fails ends the decoding with an error naming it.
func decodeCapture(in *bufio.Reader, name string, asJSON bool, maxFrame uint32, out *bufio.Writer, stderr io.Writer) int {
	if _, err := in.Discard(len(sim.CaptureMagic)); err != nil {
		fmt.Fprintf(stderr, "vopr decode: %s: %v\n", name, err)
		return 1
	}
	offset := int64(len(sim.CaptureMagic))
	head := make([]byte, sim.CaptureRecordHeaderSize)
	for index := 0; ; index++ {
		if _, err := out.Write(nil); err != nil {
			return 1
		}
		n, err := io.ReadFull(in, head)
		if n == 0 && err == io.EOF {
			if out.Flush() != nil {
				return 1
			}
			return 0
		}
		fail := func(format string, args ...any) int {
			out.Flush()
			fmt.Fprintf(stderr, "vopr decode: %s: capture record %d at offset %d: %s\n", name, index, offset, fmt.Sprintf(format, args...))
			return 1
		}
		if err != nil {
			return fail("truncated header (%d of %d bytes)", n, len(head))
		}
		if string(head[:4]) != sim.CaptureRecordMagic {
			return fail("magic %q, want %q", head[:4], sim.CaptureRecordMagic)
		}
		size := binary.LittleEndian.Uint32(head[4:])
		if size < wire.HeaderSize || size > maxFrame {
			return fail("a frame of %d bytes (want %d..%d)", size, wire.HeaderSize, maxFrame)
		}
		frame := make([]byte, size)
		if n, err := io.ReadFull(in, frame); err != nil {
			return fail("truncated frame (%d of %d bytes)", n, size)
		}
		h := xxh3.New()
		h.Write(head[8:20])
		h.Write(frame)
		if got, want := h.Sum64(), binary.LittleEndian.Uint64(head[20:]); got != want {
			return fail("checksum %#016x, record says %#016x", got, want)
		}
		report := describe(index, offset, frame)
		at := int64(binary.LittleEndian.Uint64(head[8:]))
		from, to := head[16], head[17]
		report.AtNs, report.From, report.To = &at, &from, &to
		if asJSON {
			line, err := json.Marshal(report)
			if err != nil {
				panic(err)
			}
			out.Write(line)
			out.WriteByte('\n')
		} else {
			report.writeText(out)
		}
		offset += int64(len(head)) + int64(size)
	}
}

// decodeHexText turns hex text into bytes, ignoring whitespace.
func decodeHexText(text []byte) ([]byte, error) {
	digits := make([]byte, 0, len(text))
	for i, c := range text {
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
		case ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F'):
			digits = append(digits, c)
		default:
			return nil, fmt.Errorf("hex input: byte %q at input offset %d is neither a hex digit nor whitespace", c, i)
		}
	}
	if len(digits)%2 != 0 {
		return nil, fmt.Errorf("hex input: odd number of hex digits (%d)", len(digits))
	}
	b := make([]byte, len(digits)/2)
	if _, err := hex.Decode(b, digits); err != nil {
		return nil, fmt.Errorf("hex input: %v", err)
	}
	return b, nil
}

// frameReport is what decode prints for one frame; its JSON keys are the
// documented output contract, in this order.
type frameReport struct {
	Schema       int       `json:"schema"` // jsonSchema
	Index        int       `json:"index"`
	Offset       int64     `json:"offset"`
	Command      string    `json:"command"`
	CommandID    uint8     `json:"command_id"`
	Size         uint32    `json:"size"`
	View         uint32    `json:"view"`
	Release      uint32    `json:"release"`
	Replica      uint8     `json:"replica"`
	Cluster      wire.U128 `json:"cluster"`
	Checksum     wire.U128 `json:"checksum"`
	ChecksumBody wire.U128 `json:"checksum_body"`
	Valid        bool      `json:"valid"`
	Error        string    `json:"error"`
	Integrity    string    `json:"integrity"`
	Fields       object    `json:"fields"`
	// From a -capture file: when the frame was delivered, from which
	// replica to which.
	AtNs *int64 `json:"at_ns,omitempty"`
	From *uint8 `json:"from,omitempty"`
	To   *uint8 `json:"to,omitempty"`
}

// describe decodes one framed frame into its report.
func describe(index int, offset int64, frame []byte) frameReport {
	h := wire.HeaderOf(frame)
	p := h.Prefix()
	rep := frameReport{
		Schema: jsonSchema,
		Index:  index, Offset: offset,
		Command: p.Command.SnakeName(), CommandID: uint8(p.Command),
		Size: p.Size, View: p.View, Release: p.Release, Replica: p.Replica,
		Cluster: p.Cluster, Checksum: p.Checksum, ChecksumBody: p.ChecksumBody,
		Valid:     true,
		Integrity: wire.CheckIntegrity(frame).String(),
		Fields:    object{},
	}
	if err := wire.Validate(frame); err != nil {
		rep.Valid = false
		// The rule that failed, with the values involved; the command is
		// already in its own key.
		var fe *wire.FrameError
		if errors.As(err, &fe) {
			rep.Error = fe.Rule.Error()
			if fe.Detail != "" {
				rep.Error += " (" + fe.Detail + ")"
			}
		} else {
			rep.Error = err.Error()
		}
	}
	x := wire.TypedFor(p.Command)
	if x == nil {
		return rep
	}
	x.Decode(h)
	rep.Fields = fieldsOf(x)
	body := frame[wire.HeaderSize:]
	switch v := x.(type) {
	case *wire.RequestHeader:
		// wire.md 5.20: the command code lives in the reserved bytes only for
		// NonReplicated, and group only in the server-internal routed form.
		// Clients send bytes 248..256 zero (vector A4), so a nonzero group
		// is the one sign on the wire that the frame is a routed request.
		if v.Operation != wire.OperationNonReplicated {
			rep.Fields = rep.Fields.without("command_code")
		}
		if v.Group == 0 {
			rep.Fields = rep.Fields.without("group")
		}
	case *wire.PrepareHeader:
		if v.Operation == wire.OperationSendMessages {
			rep.Fields = append(rep.Fields, member{"batch", batchSummary(body)})
		}
	case *wire.DoViewChangeHeader:
		rep.Fields = appendSuffix(rep.Fields, body, v.Op)
	case *wire.StartViewHeader:
		rep.Fields = appendSuffix(rep.Fields, body, v.Op)
	case *wire.StateTransferTargetHeader:
		if len(body) > 0 {
			rep.Fields = appendManifest(rep.Fields, body)
		}
	}
	return rep
}

// fieldsOf lists the per-command fields of a typed header, named by their
// json tags (wire.md section 5's names), in declaration order.
func fieldsOf(x wire.Typed) object {
	v := reflect.ValueOf(x).Elem()
	t := v.Type()
	var o object
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		o = append(o, member{name, v.Field(i).Interface()})
	}
	return o
}

func batchSummary(body []byte) object {
	bh, err := wire.ReadBatchHeader(body)
	if err != nil {
		return object{{"error", err.Error()}}
	}
	o := object{
		{"base_offset", bh.BaseOffset},
		{"message_count", bh.MessageCount},
	}
	verr := wire.VerifyBatch(body)
	checksumOK := verr == nil || !errors.Is(verr, wire.ErrBatchChecksum) && wire.BatchChecksum(body) == bh.BatchChecksum
	o = append(o, member{"batch_checksum_ok", checksumOK})
	if verr != nil {
		o = append(o, member{"error", verr.Error()})
	}
	return o
}

func appendSuffix(o object, body []byte, head uint64) object {
	n := len(body) / wire.HeaderSize
	entries := make([]object, 0, n)
	for i := range n {
		e := wire.HeaderOf(body[i*wire.HeaderSize:])
		var p wire.PrepareHeader
		p.Decode(e)
		entries = append(entries, object{{"op", p.Op}, {"checksum", p.Checksum}, {"blank", wire.IsBlank(e)}})
	}
	o = append(o, member{"suffix", entries})
	if _, err := wire.DecodeSuffix(body, head); err != nil {
		o = append(o, member{"suffix_error", err.Error()})
	}
	return o
}

func appendManifest(o object, body []byte) object {
	entries, err := wire.DecodeManifest(body)
	if err != nil {
		return append(o, member{"manifest_error", err.Error()})
	}
	list := make([]object, 0, len(entries))
	for _, e := range entries {
		list = append(list, object{{"kind", e.Kind}, {"frontier", e.Frontier}, {"len", e.Len}, {"checksum", e.Checksum}})
	}
	return append(o, member{"manifest", list})
}

// object is a JSON object whose members keep their order.
type object []member

type member struct {
	name  string
	value any
}

func (o object) without(name string) object {
	var out object
	for _, m := range o {
		if m.name != name {
			out = append(out, m)
		}
	}
	return out
}

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(m.name)
		b.Write(name)
		b.WriteByte(':')
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
