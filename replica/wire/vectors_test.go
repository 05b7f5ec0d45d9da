package wire

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// Golden vectors of wire.md section 12. The A vectors come from Iggy's own
// tests; the B vectors were computed for the spec and cross-checked with
// independent tools (see testdata/independent/results.txt and independent_test.go).

// mustHex decodes hex, which may be written with spaces and line breaks.
func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex in test: %v", err)
	}
	return b
}

// expectBytes asserts that h is zero everywhere except at the given offsets,
// where it holds the given hex bytes.
func expectBytes(t *testing.T, h *Header, nonzero map[int]string) {
	t.Helper()
	var want Header
	for off, s := range nonzero {
		copy(want[off:], mustHex(t, s))
	}
	if *h != want {
		for i := range h {
			if h[i] != want[i] {
				t.Errorf("byte %d = %#02x, want %#02x", i, h[i], want[i])
			}
		}
	}
}

func TestVectorB1XXH3(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
	}{
		{"", 0x2d06800538d394c2},
		{"abc", 0x78af5f94892f3950},
	}
	for _, tt := range tests {
		if got := BodySeal([]byte(tt.in)); got != U128From64(tt.want) {
			t.Errorf("XXH3(%q) = %s, want %#x", tt.in, got, tt.want)
		}
	}
}

func TestVectorB2ClusterID(t *testing.T) {
	tests := []struct {
		name  string
		bytes string
		value U128
	}{
		{"iggy-cluster", "21bb05c88727bab88d0ec27be8a72d46", U128{Lo: 0xb8ba2787c805bb21, Hi: 0x462da7e87bc20e8d}},
		{"other", "3f796163ebf94718de1cd7582655c012", U128{}},
	}
	for _, tt := range tests {
		id := ClusterID(tt.name)
		var b [16]byte
		putU128(b[:], id)
		if got := hex.EncodeToString(b[:]); got != tt.bytes {
			t.Errorf("cluster id of %q on the wire = %s, want %s", tt.name, got, tt.bytes)
		}
		if !tt.value.IsZero() && id != tt.value {
			t.Errorf("cluster id of %q = %s, want %s", tt.name, id, tt.value)
		}
	}
	if got := ClusterID("iggy-cluster").String(); got != "0x462da7e87bc20e8db8ba2787c805bb21" {
		t.Errorf("String() = %s", got)
	}
}

// b3Transcript is the transcript of Iggy's auth.rs unit tests (vector B3).
func b3Transcript(tls bool) Transcript {
	tr := Transcript{Cluster: U128From64(0xDEADBEEF), Dialer: 3, Acceptor: 1, TLS: tls}
	for i := range tr.NonceD {
		tr.NonceD[i] = 0x11
		tr.NonceA[i] = 0x22
		if tls {
			tr.Exporter[i] = 0xaa
		}
	}
	return tr
}

const b3Secret = "0123456789abcdef0123456789abcdef"

func TestVectorB3Handshake(t *testing.T) {
	key := DeriveMACKey([]byte(b3Secret))
	if got, want := key.String(), "39ec545024b097198cbf082b239525e97c0da3a60f3a18fd29f7d169de6a54be"; got != want {
		t.Fatalf("mac_key = %s, want %s", got, want)
	}
	tests := []struct {
		name string
		tls  bool
		dir  MACDirection
		want string
	}{
		{"plaintext acceptor", false, MACAcceptor, "d01fab02794764b228d1817948d0b60c24739807a19b3da9023a8082c3d5e0ee"},
		{"plaintext dialer", false, MACDialer, "58437a3a453354283bb2522096dc7a5e2091051961bf28a6d6022bc7b950b92f"},
		{"tls acceptor", true, MACAcceptor, "bd040494264e4958d51e8645379cc89b92d33cfd7aeb75baff0dff3257d5d2e4"},
		{"tls dialer", true, MACDialer, "94ae1cc3c11c45864a3793f24e494828ffaca63745f6216570037333292153d8"},
	}
	for _, tt := range tests {
		tr := b3Transcript(tt.tls)
		if got := tr.MAC(key, tt.dir); got.String() != tt.want {
			t.Errorf("%s: MAC = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestTranscriptLayout(t *testing.T) {
	tr := b3Transcript(true)
	b := tr.Bytes(MACAcceptor)
	want := bytes.Join([][]byte{
		[]byte("apache-iggy replica-auth v1"),
		mustHex(t, "efbeadde000000000000000000000000"),
		{3, 1},
		bytes.Repeat([]byte{0x11}, 32),
		bytes.Repeat([]byte{0x22}, 32),
		{1},
		bytes.Repeat([]byte{0xaa}, 32),
		{2},
	}, nil)
	if !bytes.Equal(b[:], want) {
		t.Fatalf("transcript\n got %x\nwant %x", b, want)
	}
	// Plaintext mode writes a zero exporter even if one is set.
	tr.TLS = false
	b = tr.Bytes(MACDialer)
	if b[109] != 0 || !allZero(b[110:142]) || b[142] != 1 {
		t.Fatalf("plaintext transcript tail = %x", b[109:])
	}
}

func TestVectorB4ForwardRegisterSeal(t *testing.T) {
	x := ForwardRegisterHeader{
		Prefix: Prefix{Cluster: U128From64(7), View: 3, Replica: 2},
		Client: U128From64(0xCAFE),
		Nonce:  U128From64(0xF00D),
		UserID: 41,
	}
	frame := BuildFrame(&x, nil)
	want := mustHex(t, "8d1db6dc1ed285a8"+zeros(24)+"0700000000000000"+"0000000000000000"+
		"00010000"+"03000000"+"00000000"+"1a"+"02"+zeros(66)+
		"feca0000000000000000000000000000"+"0df00000000000000000000000000000"+"29000000"+zeros(92))
	if !bytes.Equal(frame, want) {
		t.Fatalf("ForwardRegister frame\n got %x\nwant %x", frame, want)
	}
	if got := FrameSeal(HeaderOf(frame)); got != U128From64(0xa885d21edcb61d8d) {
		t.Fatalf("seal = %s", got)
	}
	if err := Validate(frame); err != nil {
		t.Fatalf("Validate: %v", err)
	}
}

func zeros(n int) string { return string(bytes.Repeat([]byte("00"), n)) }

func TestVectorB5MinimalSeals(t *testing.T) {
	tests := []struct {
		c    Command
		want string
	}{
		{CommandPrepareOk, "103fc39f6c77ff02"},
		{CommandCommit, "1d44e90c4e359bdb"},
		{CommandStartViewChange, "96d636e02024b1a2"},
		{CommandDoViewChange, "c715fae81a469aea"},
		{CommandStartView, "2c73260121cb3b53"},
		{CommandRequestStartView, "85c8bafc1072c5b9"},
	}
	for _, tt := range tests {
		var h Header
		h.SetSize(HeaderSize)
		h.SetCommand(tt.c)
		h.SealFrame()
		if got := hex.EncodeToString(h[:16]); got != tt.want+zeros(8) {
			t.Errorf("%v: seal bytes %s, want %s%s", tt.c, got, tt.want, zeros(8))
		}
	}
}

// b6Prepare is the metadata Register prepare of vector B6.
func b6Prepare() PrepareHeader {
	return PrepareHeader{
		Prefix:    Prefix{Cluster: ClusterID("iggy-cluster"), Command: CommandPrepare},
		Client:    U128From64(0x1234),
		Op:        1,
		Timestamp: 1_700_000_000_000_000,
		Operation: OperationRegister,
		Group:     MetadataGroup,
		UserID:    7,
	}
}

func TestVectorB6PrepareIdentity(t *testing.T) {
	x := b6Prepare()
	frame := BuildFrame(&x, nil)
	h := HeaderOf(frame)
	if got := h.Checksum(); got != U128From64(0x21d30e33b7cc68e5) {
		t.Fatalf("identity = %s, want 0x21d30e33b7cc68e5", got)
	}
	expectBytes(t, h, map[int]string{
		0:   "e568ccb7330ed321",
		16:  "c294d3380580062d",
		32:  "21bb05c88727bab88d0ec27be8a72d46",
		49:  "01",
		60:  "06",
		128: "3412",
		176: "01",
		193: "401e18240a06",
		208: "01",
		223: "80",
		224: "07",
	})
	// Re-stamping the view keeps the identity valid (wire.md 3.5).
	h.SetView(5)
	if got := PrepareIdentity(h); got != U128From64(0x21d30e33b7cc68e5) {
		t.Fatalf("identity after view 5 = %s", got)
	}
	if err := Validate(frame); err != nil {
		t.Fatalf("Validate after re-stamp: %v", err)
	}
	// As a RepairPrepare, the same bytes but byte 60, it still verifies.
	ToRepairPrepare(frame)
	if frame[60] != 19 {
		t.Fatalf("command byte %d", frame[60])
	}
	if err := Validate(frame); err != nil {
		t.Fatalf("Validate RepairPrepare: %v", err)
	}
	ToPrepare(frame)
	if frame[60] != 6 {
		t.Fatalf("command byte %d", frame[60])
	}
}

func TestVectorB7DoViewChange(t *testing.T) {
	p := b6Prepare()
	prepare := BuildFrame(&p, nil)
	x := DoViewChangeHeader{
		Prefix:        Prefix{Cluster: ClusterID("iggy-cluster"), View: 1, Replica: 1},
		Op:            1,
		Group:         MetadataGroup,
		PresentBitset: U128{}.WithBit(0),
	}
	frame := BuildFrame(&x, EncodeSuffix([]Header{*HeaderOf(prepare)}))
	h := HeaderOf(frame)
	if got := h.ChecksumBody(); got != U128From64(0xbfbca47ffd510665) {
		t.Errorf("checksum_body = %s", got)
	}
	if got := h.Checksum(); got != U128From64(0x8363aa5494210733) {
		t.Errorf("seal = %s", got)
	}
	expectBytes(t, h, map[int]string{
		0:   "3307219454aa6383",
		16:  "650651fd7fa4bcbf",
		32:  "21bb05c88727bab88d0ec27be8a72d46",
		49:  "02",
		52:  "01",
		60:  "0b",
		61:  "01",
		128: "01",
		151: "80",
		240: "01",
	})
	if !bytes.Equal(frame[HeaderSize:], prepare) {
		t.Errorf("body is not the B6 prepare header")
	}
	if err := Validate(frame); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	entries, err := DecodeSuffix(frame[HeaderSize:], 1)
	if err != nil || len(entries) != 1 || entries[0] != *HeaderOf(prepare) {
		t.Fatalf("DecodeSuffix = %d entries, %v", len(entries), err)
	}
}

func TestVectorA1GroupPacking(t *testing.T) {
	tests := []struct {
		g    PartitionGroup
		want uint64
	}{
		{PartitionGroup{0, 0, 0}, 0x0},
		{PartitionGroup{5, 2, 7}, 0x5_0020_0007},
		{PartitionGroup{1, 0, 0}, 0x1_0000_0000},
		{PartitionGroup{4095, 4095, 999999}, 0xFFF_FFFF_423F},
		{PartitionGroup{4096, 0, 0}, 0x1000_0000_0000},
		{PartitionGroup{1<<20 - 1, 4095, 999999}, 0xF_FFFF_FFFF_423F},
	}
	for _, tt := range tests {
		got, err := PackGroup(tt.g)
		if err != nil || got != tt.want {
			t.Errorf("PackGroup(%v) = %#x, %v; want %#x", tt.g, got, err, tt.want)
		}
		back, err := UnpackGroup(got)
		if err != nil || back != tt.g {
			t.Errorf("UnpackGroup(%#x) = %v, %v", got, back, err)
		}
	}
	for _, bad := range []PartitionGroup{{1 << 20, 0, 0}, {0, 4096, 0}, {0, 0, 1_000_000}} {
		if _, err := PackGroup(bad); err == nil {
			t.Errorf("PackGroup(%v) accepted an out-of-range component", bad)
		}
	}
	for _, bad := range []uint64{MetadataGroup, 1 << 52, 1_000_000} {
		if _, err := UnpackGroup(bad); err == nil {
			t.Errorf("UnpackGroup(%#x) accepted", bad)
		}
	}
}

func TestVectorA4RequestHeader(t *testing.T) {
	x := RequestHeader{
		Client:    U128{Lo: 0x0807060504030201, Hi: 0x100F0E0D0C0B0A09},
		Request:   2,
		Operation: OperationCreateStream,
		Session:   11,
	}
	frame := BuildFrame(&x, make([]byte, 4))
	h := HeaderOf(frame)
	expectBytes(t, h, map[int]string{
		48:  "04010000",
		60:  "05",
		128: "0102030405060708",
		136: "090a0b0c0d0e0f10",
		168: "02",
		176: "80",
		184: "0b",
	})
	nonzero := 0
	for _, c := range h {
		if c != 0 {
			nonzero++
		}
	}
	if nonzero != 22 {
		t.Errorf("%d nonzero bytes, want 22", nonzero)
	}
}

func TestVectorA7DiscriminantPins(t *testing.T) {
	for c := 14; c <= 29; c++ {
		if !Command(c).Valid() {
			t.Errorf("command %d must parse", c)
		}
	}
	for _, c := range []int{30, 99, 255} {
		if Command(c).Valid() {
			t.Errorf("command %d must not parse", c)
		}
	}
	for o := 0; o < 256; o++ {
		if got, want := o <= 6, frameOutcomeOK(CommandForwardRegisterResult, byte(o)); got != want {
			t.Errorf("ForwardRegisterOutcome %d valid=%v", o, want)
		}
		if got, want := o <= 4, frameOutcomeOK(CommandForwardLogoutResult, byte(o)); got != want {
			t.Errorf("ForwardLogoutOutcome %d valid=%v", o, want)
		}
		if got, want := o <= 15, EvictionReason(o).Valid(); got != want {
			t.Errorf("EvictionReason %d valid=%v", o, want)
		}
	}
	offsets := []struct {
		name      string
		got, want int
	}{
		{"ReplyHeader.status", offReplyStatus, 216},
		{"RoutedRequestHeader.group", offReqGroup, 248},
		{"StateTransferTarget.commit_op", offSTTCommitOp, 144},
		{"StateTransferTarget.group", offSTTGroup, 152},
		{"StateTransferTarget.available", offSTTAvailable, 160},
		{"StateTransferTarget.unavailable_transient", offSTTTransient, 161},
		{"StateTransferTarget.commit_max", offSTTCommitMax, 168},
		{"ForwardRegister.nonce", offFRNonce, 144},
		{"ForwardRegister.user_id", offFRUserID, 160},
		{"ForwardRegisterResult.client", offFRRClient, 144},
		{"ForwardRegisterResult.epoch", offFRREpoch, 160},
		{"ForwardRegisterResult.watermark", offFRRWatermark, 168},
		{"ForwardLogout.session", offFLSession, 160},
		{"ForwardLogout.request", offFLRequest, 168},
		{"ForwardLogoutResult.commit", offFLRCommit, 160},
		{"outcome", offOutcome, 255},
	}
	for _, o := range offsets {
		if o.got != o.want {
			t.Errorf("%s at %d, want %d", o.name, o.got, o.want)
		}
	}
}

// frameOutcomeOK builds a minimal valid-looking result frame with outcome o
// and reports whether the bit-pattern check accepts it.
func frameOutcomeOK(c Command, o byte) bool {
	var h Header
	h.SetCommand(c)
	h[offOutcome] = o
	return checkBitPatterns(&h) == nil
}
