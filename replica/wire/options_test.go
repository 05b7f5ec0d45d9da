package wire

import (
	"bytes"
	"errors"
	"testing"

	"pgregory.net/rapid"
)

func TestVectorA5OptionsBlock(t *testing.T) {
	pairs := []Option{
		{Key: "enforce_fsync", Kind: OptionBool, Value: []byte{1}},
		{Key: "segment_size", Kind: OptionUint64, Value: []byte{0, 0, 0, 0x40, 0, 0, 0, 0}},
	}
	want := mustHex(t, "020d000000"+"656e666f7263655f6673796e63"+"030100000001"+
		"020c000000"+"7365676d656e745f73697a65"+"0c080000000000004000000000")
	got := EncodeOptions(pairs)
	if len(got) != 54 || !bytes.Equal(got, want) {
		t.Fatalf("options block\n got %x\nwant %x", got, want)
	}
	back, err := DecodeOptions(got)
	if err != nil || len(back) != 2 || back[1].Key != "segment_size" || u64(back[1].Value) != 1<<30 {
		t.Fatalf("DecodeOptions = %+v, %v", back, err)
	}
}

func TestDecodeOptionsRejects(t *testing.T) {
	key := func(k string) []byte {
		return EncodeOptions([]Option{{Key: k, Kind: OptionBool, Value: []byte{1}}})[:5+len(k)]
	}
	val := []byte{3, 1, 0, 0, 0, 1}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name string
		in   []byte
		rule Rule
	}{
		{"entry head cut", []byte{2, 1, 0}, ErrShort},
		{"data cut", []byte{2, 5, 0, 0, 0, 'a'}, ErrShort},
		{"kind zero", cat([]byte{0, 1, 0, 0, 0, 'a'}, val), ErrOptionEntry},
		{"len zero", cat([]byte{2, 0, 0, 0, 0}, val), ErrOptionEntry},
		{"len 256", cat([]byte{2, 0, 1, 0, 0}, bytes.Repeat([]byte{'a'}, 256), val), ErrOptionEntry},
		{"key not a string", cat([]byte{9, 1, 0, 0, 0, 1}, val), ErrOptionKey},
		{"key not utf-8", cat([]byte{2, 1, 0, 0, 0, 0xff}, val), ErrOptionKey},
		{"duplicate key", cat(key("a"), val, key("a"), val), ErrOptionKey},
		{"odd count", key("a"), ErrOptionKey},
		{"too long", make([]byte, OptionBlockMax+1), ErrCountTooLarge},
	}
	for _, tt := range tests {
		if _, err := DecodeOptions(tt.in); !errors.Is(err, tt.rule) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.rule)
		}
	}
	var pairs []byte
	for i := 0; i <= OptionPairsMax; i++ {
		pairs = append(pairs, key(string(rune('a'+i%26))+string(rune(0x100+i)))...)
		pairs = append(pairs, val...)
	}
	if _, err := DecodeOptions(pairs); !errors.Is(err, ErrCountTooLarge) {
		t.Errorf("1025 pairs: %v", err)
	}
}

func TestPropertyOptionsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := rapid.SliceOfNDistinct(rapid.StringMatching(`[a-z_]{1,40}`), 0, 20, rapid.ID[string]).Draw(t, "keys")
		pairs := make([]Option, len(keys))
		for i, k := range keys {
			pairs[i] = Option{Key: k, Kind: OptionKind(rapid.IntRange(1, 15).Draw(t, "kind")),
				Value: rapid.SliceOfN(rapid.Byte(), 1, 255).Draw(t, "value")}
		}
		got, err := DecodeOptions(EncodeOptions(pairs))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(pairs) {
			t.Fatalf("%d pairs back, want %d", len(got), len(pairs))
		}
		for i := range got {
			if got[i].Key != pairs[i].Key || got[i].Kind != pairs[i].Kind || !bytes.Equal(got[i].Value, pairs[i].Value) {
				t.Fatalf("pair %d: %+v, want %+v", i, got[i], pairs[i])
			}
		}
	})
}

func FuzzDecodeOptions(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzDecodeOptions (vector A5 and a key without a value).
	f.Fuzz(func(t *testing.T, b []byte) {
		pairs, err := DecodeOptions(b)
		if err != nil {
			return
		}
		if again := EncodeOptions(pairs); !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs\n in  %x\n out %x", b, again)
		}
	})
}
