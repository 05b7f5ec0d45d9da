package clients

import (
	"bytes"
	"errors"
	"testing"
)

// TestCheckpointKeepsTheNewestReply: a table restored from its checkpoint
// holds each client in its slot with only its newest reply, answers a retry
// of that request with the cached reply and an older one with
// AlreadyApplied, and re-encodes to the same bytes.
func TestCheckpointKeepsTheNewestReply(t *testing.T) {
	tb := New(4)
	a, b := client(1), client(2)
	tb.CommitRegister(0, registerReply(a, 1, 0))
	tb.CommitRegister(0, registerReply(b, 2, 0))
	tb.CommitRequest(requestReply(a, 3, 1, sum(1)))
	tb.CommitRequest(requestReply(a, 4, 2, sum(2)))
	tb.CommitLogout(b) // slot 1 is free; c takes it, and the checkpoint keeps no slots
	c := client(3)
	tb.CommitRegister(0, registerReply(c, 5, 0))
	enc := tb.EncodeCheckpoint()
	back, err := DecodeCheckpoint(enc, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.EncodeCheckpoint(), enc) || back.Digest() != tb.Checkpointed().Digest() {
		t.Fatal("the restored table is not the checkpointed one")
	}
	if e, _ := back.Lookup(c); e.Slot != 1 {
		t.Fatalf("client 3 restored into slot %d, not 1", e.Slot)
	}
	if v := back.CheckRequest(req(a, 1, 2, sum(2))); v.Kind != VerdictReplay {
		t.Fatalf("retry of the newest request: %v", v.Kind)
	}
	if v := back.CheckRequest(req(a, 1, 1, sum(1))); v.Kind != VerdictAlreadyApplied {
		t.Fatalf("retry of an older request: %v", v.Kind)
	}
	if v := tb.CheckRequest(req(a, 1, 1, sum(1))); v.Kind != VerdictReplay {
		t.Fatalf("the live table lost its ring: %v", v.Kind)
	}
}

// TestCheckpointRules: a malformed section is refused with ErrCheckpoint.
func TestCheckpointRules(t *testing.T) {
	tb := New(2)
	tb.CommitRegister(0, registerReply(client(1), 1, 0))
	good := tb.EncodeCheckpoint()
	cases := map[string][]byte{
		"empty":          nil,
		"cut":            good[:len(good)-1],
		"trailing":       append(append([]byte(nil), good...), 0),
		"other capacity": New(3).EncodeCheckpoint(),
		"compact int":    append([]byte{0x92, 0x02}, good[6:]...),
	}
	for name, b := range cases {
		if _, err := DecodeCheckpoint(b, 2); !errors.Is(err, ErrCheckpoint) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	if _, err := DecodeCheckpoint(good, 2); err != nil {
		t.Fatal(err)
	}
}

// Checkpointed returns the table a restart from a checkpoint taken now
// would hold: every entry in its slot with its newest reply only.
func (t *Table) Checkpointed() *Table {
	c := t.Clone()
	for _, e := range c.slots {
		if e != nil {
			e.ring = append(make([]cached, 0, RingCapacity), e.ring[len(e.ring)-1])
		}
	}
	return c
}
