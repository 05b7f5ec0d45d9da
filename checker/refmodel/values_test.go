package refmodel

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestHumantimeVectors: every parse_duration assertion of humantime 2.4.0's
// own tests (testdata/humantime-2.4.0.txt, extracted from its
// src/duration.rs), the parser Iggy reads a message_expiry text with.
func TestHumantimeVectors(t *testing.T) {
	f, err := os.Open("testdata/humantime-2.4.0.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		var in string
		if err := json.Unmarshal([]byte(fields[1]), &in); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		n++
		secs, nanos, ok := parseHumantime(in)
		if fields[0] == "err" {
			if ok {
				t.Errorf("parseHumantime(%q) = %d s %d ns, humantime refuses it", in, secs, nanos)
			}
			continue
		}
		wantSecs, _ := strconv.ParseUint(fields[2], 10, 64)
		wantNanos, _ := strconv.ParseUint(fields[3], 10, 32)
		if !ok || secs != wantSecs || uint64(nanos) != wantNanos {
			t.Errorf("parseHumantime(%q) = %d s %d ns %v, want %d s %d ns", in, secs, nanos, ok, wantSecs, wantNanos)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("only %d vectors", n)
	}
}

// TestHumantimeGrammar: the spacing rules and the failures humantime's own
// vectors do not spell out.
func TestHumantimeGrammar(t *testing.T) {
	ok := map[string][2]uint64{ // seconds, nanoseconds
		"10s": {10, 0}, "1h 30m": {5400, 0}, "1h30m": {5400, 0}, "1 h": {3600, 0}, "1 2s": {12, 0},
		" 2 days ": {172_800, 0}, "1ms 999999999ns": {1, 999_999}, "1000000000ns": {1, 0},
		"1\u00a0s": {1, 0}, "1s\u30002s": {3, 0}, "1.5 h": {5400, 0}, "1. 5h": {5400, 0}, "1 .5h": {5400, 0},
		"4294967295s 999ms": {4294967295, 999_000_000}, "3 wks": {1_814_400, 0}, "5\u00b5s": {0, 5000},
	}
	for in, want := range ok {
		s, n, good := parseHumantime(in)
		if !good || s != want[0] || uint64(n) != want[1] {
			t.Errorf("parseHumantime(%q) = %d s %d ns %v, want %v", in, s, n, good, want)
		}
	}
	for _, in := range []string{"", " ", "100", "h", "1x", "1h,", "-1s", "+1s", "1s 2", "1s,2s", "5\u03bcs", "1.5", "1.h", "1.5.5h",
		"18446744073709551615s 1s", "18446744073709551616s", "600000000000000000y", "1.5ns", "\u00b5s", "1S", "1H", "1Ms"} {
		if s, n, good := parseHumantime(in); good {
			t.Errorf("parseHumantime(%q) = %d s %d ns, want a failure", in, s, n)
		}
	}
}

// TestPropertyHumantimeSums: terms of whole numbers and units, joined with
// any spacing, add up exactly (or overflow, which fails).
func TestPropertyHumantimeSums(t *testing.T) {
	units := []struct {
		name  string
		nanos int64
	}{
		{"ns", 1}, {"us", 1000}, {"\u00b5s", 1000}, {"ms", 1e6}, {"s", 1e9}, {"min", 60e9}, {"h", 3600e9},
		{"days", 86400e9}, {"wk", 604800e9}, {"M", 2_630_016e9}, {"yr", 31_557_600e9},
	}
	rapid.Check(t, func(t *rapid.T) {
		var b strings.Builder
		total := new(big.Int)
		for i := range rapid.IntRange(1, 4).Draw(t, "terms") {
			n := rapid.Uint64Range(0, 1<<rapid.IntRange(1, 63).Draw(t, "bits")).Draw(t, "n")
			u := units[rapid.IntRange(0, len(units)-1).Draw(t, "unit")]
			if i > 0 || rapid.Bool().Draw(t, "lead") {
				b.WriteString(rapid.SampledFrom([]string{"", " ", "  ", "\t"}).Draw(t, "space"))
			}
			b.WriteString(strconv.FormatUint(n, 10))
			b.WriteString(rapid.SampledFrom([]string{"", " "}).Draw(t, "gap"))
			b.WriteString(u.name)
			total.Add(total, new(big.Int).Mul(new(big.Int).SetUint64(n), big.NewInt(u.nanos)))
		}
		s, n, ok := parseHumantime(b.String())
		secs, rem := new(big.Int).QuoRem(total, big.NewInt(1e9), new(big.Int))
		// humantime multiplies each term in its own unit and adds with
		// overflow checks, so a sum whose seconds fit may still fail when
		// one term's nanoseconds overflow u64: only require exactness of
		// what it accepts, and acceptance of what fits comfortably.
		if ok && (secs.Cmp(new(big.Int).SetUint64(s)) != 0 || rem.Uint64() != uint64(n)) {
			t.Fatalf("%q = %d s %d ns, want %v s %v ns", b.String(), s, n, secs, rem)
		}
		if !ok && total.Cmp(big.NewInt(math.MaxInt64)) < 0 {
			t.Fatalf("%q refused, its sum %v ns fits", b.String(), total)
		}
	})
}

func TestTextValues(t *testing.T) {
	never, none := uint64(math.MaxUint64), uint64(0)
	for _, c := range []struct {
		what string
		fn   func(string) (uint64, bool)
		in   string
		want uint64
		ok   bool
	}{
		{"expiry", expiryText, "unlimited", never, true},
		{"expiry", expiryText, "Unlimited", never, true},
		{"expiry", expiryText, "none", never, true},
		{"expiry", expiryText, "None", never, true},
		{"expiry", expiryText, "never_expire", never, true},
		{"expiry", expiryText, "default", none, true},
		{"expiry", expiryText, "Default", none, true},
		{"expiry", expiryText, "server_default", none, true},
		{"expiry", expiryText, "Server_default", none, true},
		{"expiry", expiryText, "SERVER_DEFAULT", 0, false},
		{"expiry", expiryText, "1s", 1_000_000, true},
		{"expiry", expiryText, "7ns", 0, true}, // truncated to whole microseconds
		{"expiry", expiryText, "1500ns", 1, true},
		{"expiry", expiryText, "4294967295s", 4294967295 * 1_000_000, true},
		{"expiry", expiryText, "4294967296s", 0, false}, // above u32::MAX seconds
		{"expiry", expiryText, "100", 0, false},
		{"byte size", byteSizeText, "0", 0, true},
		{"byte size", byteSizeText, "unlimited", 0, true},
		{"byte size", byteSizeText, "Unlimited", 0, true},
		{"byte size", byteSizeText, "none", 0, true},
		{"byte size", byteSizeText, "None", 0, true},
		{"byte size", byteSizeText, "server_default", 0, false},
		{"byte size", byteSizeText, "1048576", 1 << 20, true},
		{"byte size", byteSizeText, "0001", 1, true},
		{"byte size", byteSizeText, "18446744073709551615", math.MaxUint64, true},
		{"byte size", byteSizeText, "18446744073709551616", 0, false},
		{"byte size", byteSizeText, "+7", 0, false},
		{"byte size", byteSizeText, " 7", 0, false},
		{"byte size", byteSizeText, "128MiB", 0, false},
		{"byte size", byteSizeText, "1.5", 0, false},
		{"byte size", byteSizeText, "", 0, false},
		{"max topic size", maxTopicSizeText, "unlimited", never, true},
		{"max topic size", maxTopicSizeText, "Unlimited", 0, true}, // a byte-size keyword: 0
		{"max topic size", maxTopicSizeText, "server_default", 0, true},
		{"max topic size", maxTopicSizeText, "None", 0, true},
		{"max topic size", maxTopicSizeText, "2147483648", 1 << 31, true},
		{"max topic size", maxTopicSizeText, "18446744073709551615", never, true},
	} {
		got, ok := c.fn(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("%s %q = %d %v, want %d %v", c.what, c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestCatalogValues(t *testing.T) {
	u32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	for _, c := range []struct {
		p    option
		want catalog
		err  error
	}{
		{option{keyCompression, kindUint8, []byte{2}}, catalog{compression: some(uint8(2))}, nil},
		{option{keyCompression, kindUint8, []byte{3}}, catalog{}, errBadValue},
		{option{keyCompression, kindUint64, u64(1)}, catalog{}, errBadValue},
		{option{keyCompression, kindString, []byte("GzIp")}, catalog{compression: some(uint8(2))}, nil},
		{option{keyCompression, kindString, []byte("GZ\u0130P")}, catalog{}, errBadValue}, // Rust lowercases U+0130 to two characters
		{option{keyEnforceFsync, kindBool, []byte{2}}, catalog{}, errBadValue},
		{option{keyEnforceFsync, kindString, []byte("TRUE")}, catalog{}, errBadValue},
		{option{keyEnforceFsync, kindString, []byte("true")}, catalog{enforceFsync: some(true)}, nil},
		{option{keyMessagesToSave, kindUint32, u32(0)}, catalog{}, errBadValue},
		{option{keyMessagesToSave, kindUint32, u32(16 << 20)}, catalog{messagesToSave: some(uint32(16 << 20))}, nil},
		{option{keyMessagesToSave, kindUint32, u32(16<<20 + 1)}, catalog{}, errBadValue},
		{option{keyMessagesToSave, kindString, []byte("+16")}, catalog{messagesToSave: some(uint32(16))}, nil},
		{option{keyMessagesToSave, kindString, []byte("4294967296")}, catalog{}, errBadValue},
		{option{keySizeToSave, kindUint64, u64(1<<30 + 1)}, catalog{}, errBadValue},
		{option{keySizeToSave, kindUint64, u64(0)}, catalog{}, nil}, // 0 = absent
		{option{keySegmentSize, kindString, []byte("Unlimited")}, catalog{}, nil},
		{option{keyMessageExpiry, kindUint64, u64(0)}, catalog{}, nil}, // server default: absent
		{option{keyMessageExpiry, kindUint64, u64(5)}, catalog{messageExpiry: some(uint64(5))}, nil},
		{option{keyMessageExpiry, kindUint64, []byte{1, 2, 3, 4}}, catalog{}, errBadValue},
		{option{keyMaxTopicSize, kindString, []byte("unlimited")}, catalog{maxTopicSize: some(uint64(math.MaxUint64))}, nil},
		{option{keyPreallocate, kindString, []byte{0xff}}, catalog{}, errBadValue},
		{option{"partitions_count", kindUint32, u32(1)}, catalog{}, errUnknownKey},
	} {
		var got catalog
		err := got.absorb(c.p)
		if err != c.err || got != c.want {
			t.Errorf("absorb(%s %d % x) = %+v, %v; want %+v, %v", c.p.key, c.p.kind, c.p.value, got, err, c.want, c.err)
		}
	}
}
