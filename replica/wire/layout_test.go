package wire

import (
	"reflect"
	"testing"
)

// wireLayout is wire.md section 5, transcribed: for every command, each
// per-command field's name (as the tables write it), offset and size.
var wireLayout = []struct {
	commands []Command
	fields   []fieldAt
}{
	{[]Command{CommandRequest}, []fieldAt{{"client", 128, 16}, {"request_checksum", 144, 16}, {"timestamp", 160, 8},
		{"request", 168, 8}, {"operation", 176, 1}, {"session", 184, 8}, {"user_id", 192, 4}, {"command_code", 196, 4},
		{"group", 248, 8}}},
	{[]Command{CommandPrepare, CommandRepairPrepare}, []fieldAt{{"client", 128, 16}, {"parent", 144, 16},
		{"request_checksum", 160, 16}, {"op", 176, 8}, {"commit", 184, 8}, {"timestamp", 192, 8}, {"request", 200, 8},
		{"operation", 208, 1}, {"group", 216, 8}, {"user_id", 224, 4}}},
	{[]Command{CommandPrepareOk}, []fieldAt{{"parent", 128, 16}, {"prepare_checksum", 144, 16}, {"op", 160, 8},
		{"commit", 168, 8}, {"timestamp", 176, 8}, {"request", 184, 8}, {"operation", 192, 1}, {"group", 200, 8}}},
	{[]Command{CommandReply}, []fieldAt{{"request_checksum", 128, 16}, {"context", 144, 16}, {"client", 160, 16},
		{"op", 176, 8}, {"commit", 184, 8}, {"timestamp", 192, 8}, {"request", 200, 8}, {"operation", 208, 1},
		{"status", 216, 4}}},
	{[]Command{CommandCommit}, []fieldAt{{"commit_checksum", 128, 16}, {"timestamp_monotonic", 144, 8},
		{"commit", 152, 8}, {"checkpoint_op", 160, 8}, {"group", 168, 8}}},
	{[]Command{CommandStartViewChange}, []fieldAt{{"group", 128, 8}}},
	{[]Command{CommandDoViewChange}, []fieldAt{{"op", 128, 8}, {"commit", 136, 8}, {"group", 144, 8},
		{"log_view", 152, 4}, {"nack_bitset", 224, 16}, {"present_bitset", 240, 16}}},
	{[]Command{CommandStartView}, []fieldAt{{"op", 128, 8}, {"commit", 136, 8}, {"group", 144, 8},
		{"incarnation", 240, 16}}},
	{[]Command{CommandEviction}, []fieldAt{{"client", 128, 16}, {"server_protocol_version", 144, 4},
		{"server_protocol_version_min", 148, 4}, {"reason", 255, 1}}},
	{[]Command{CommandReplicaHello, CommandReplicaChallenge, CommandReplicaFinish}, []fieldAt{{"nonce", 128, 32},
		{"mac", 160, 32}, {"status", 192, 1}}},
	{[]Command{CommandRequestStartView}, []fieldAt{{"group", 128, 8}, {"incarnation", 240, 16}}},
	{[]Command{CommandRequestPrepares}, []fieldAt{{"nonce", 128, 16}, {"from_op", 144, 8}, {"to_op", 152, 8},
		{"group", 160, 8}}},
	{[]Command{CommandRepairDone, CommandRangeEvicted}, []fieldAt{{"nonce", 128, 16}, {"op", 144, 8}, {"group", 152, 8}}},
	{[]Command{CommandRequestStateTransfer}, []fieldAt{{"nonce", 128, 16}, {"group", 144, 8}}},
	{[]Command{CommandStateTransferTarget}, []fieldAt{{"nonce", 128, 16}, {"commit_op", 144, 8}, {"group", 152, 8},
		{"available", 160, 1}, {"unavailable_transient", 161, 1}, {"commit_max", 168, 8}}},
	{[]Command{CommandRequestStateChunk}, []fieldAt{{"nonce", 128, 16}, {"offset", 144, 8}, {"group", 152, 8},
		{"len", 160, 4}, {"artifact", 164, 4}}},
	{[]Command{CommandStateChunk}, []fieldAt{{"nonce", 128, 16}, {"offset", 144, 8}, {"group", 152, 8},
		{"artifact", 160, 4}}},
	{[]Command{CommandForwardRegister}, []fieldAt{{"client", 128, 16}, {"nonce", 144, 16}, {"user_id", 160, 4}}},
	{[]Command{CommandForwardRegisterResult}, []fieldAt{{"nonce", 128, 16}, {"client", 144, 16}, {"epoch", 160, 8},
		{"watermark", 168, 8}, {"outcome", 255, 1}}},
	{[]Command{CommandForwardLogout}, []fieldAt{{"client", 128, 16}, {"nonce", 144, 16}, {"session", 160, 8},
		{"request", 168, 8}}},
	{[]Command{CommandForwardLogoutResult}, []fieldAt{{"nonce", 128, 16}, {"client", 144, 16}, {"commit", 160, 8},
		{"outcome", 255, 1}}},
}

type fieldAt struct {
	name   string
	offset int
	size   int
}

// setField fills the field tagged name with the bytes 1, 2, 3, ... in wire
// order, whatever its Go type.
func setField(t *testing.T, x Typed, name string, size int) {
	t.Helper()
	v := reflect.ValueOf(x).Elem()
	for i := range v.NumField() {
		if v.Type().Field(i).Tag.Get("json") != name {
			continue
		}
		f := v.Field(i)
		var pattern [32]byte
		for j := range size {
			pattern[j] = byte(j + 1)
		}
		switch f.Kind() {
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			var n uint64
			for j := size - 1; j >= 0; j-- {
				n = n<<8 | uint64(pattern[j])
			}
			if f.Type().Size() != uintptr(size) {
				t.Fatalf("field %s is %d bytes in Go, %d on the wire", name, f.Type().Size(), size)
			}
			f.SetUint(n)
		case reflect.Struct: // U128
			if size != 16 {
				t.Fatalf("field %s: u128 with wire size %d", name, size)
			}
			f.Set(reflect.ValueOf(getU128(pattern[:16])))
		case reflect.Array: // Bytes32
			if f.Len() != size {
				t.Fatalf("field %s: %d-byte array, wire size %d", name, f.Len(), size)
			}
			reflect.Copy(f, reflect.ValueOf(pattern[:size]))
		default:
			t.Fatalf("field %s has kind %v", name, f.Kind())
		}
		return
	}
	t.Fatalf("%T has no field %q", x, name)
}

// TestLayoutMatchesSpec encodes every field of every command, one at a time,
// and checks it lands at its wire.md offset, little-endian, touching no other
// byte; and that the typed header has no field the spec does not list.
func TestLayoutMatchesSpec(t *testing.T) {
	covered := map[Command]bool{}
	for _, layout := range wireLayout {
		for _, c := range layout.commands {
			covered[c] = true
			probe := TypedFor(c)
			if n := reflect.TypeOf(probe).Elem().NumField() - 1; n != len(layout.fields) {
				t.Errorf("%v: typed header has %d fields, spec lists %d", c, n, len(layout.fields))
			}
			for _, f := range layout.fields {
				x := TypedFor(c)
				x.(interface{ setPrefix(Prefix) }).setPrefix(Prefix{Command: c})
				setField(t, x, f.name, f.size)
				var h Header
				x.Encode(&h)
				for i := offCommandArea; i < HeaderSize; i++ {
					want := byte(0)
					if i >= f.offset && i < f.offset+f.size {
						want = byte(i - f.offset + 1)
					}
					if h[i] != want {
						t.Errorf("%v.%s: byte %d = %#02x, want %#02x", c, f.name, i, h[i], want)
					}
				}
			}
		}
	}
	for c := CommandRequest; c <= CommandMax; c++ {
		if !covered[c] {
			t.Errorf("no layout for %v", c)
		}
	}
}

// TestPrefixLayout checks the generic prefix offsets of wire.md 2.
func TestPrefixLayout(t *testing.T) {
	x := CommitHeader{Prefix: Prefix{
		Checksum:     U128{Lo: 0x0807060504030201, Hi: 0x100f0e0d0c0b0a09},
		ChecksumBody: U128{Lo: 0x1817161514131211, Hi: 0x201f1e1d1c1b1a19},
		Cluster:      U128{Lo: 0x2827262524232221, Hi: 0x302f2e2d2c2b2a29},
		Size:         0x34333231, View: 0x38373635, Release: 0x3c3b3a39, Replica: 0x3e,
	}}
	var h Header
	x.Encode(&h)
	for i := 0; i < 62; i++ {
		want := byte(i + 1)
		if i == offCommand {
			want = byte(CommandCommit)
		}
		if h[i] != want {
			t.Errorf("prefix byte %d = %#02x, want %#02x", i, h[i], want)
		}
	}
	if !allZero(h[62:128]) {
		t.Errorf("reserved_frame not zero")
	}
}
