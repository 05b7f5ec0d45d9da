package checker_test

import (
	"encoding/binary"
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// A SendMessages request whose batch is valid by wire.md 7, dropped at
// admission as an invalid batch, is named; one whose batch is invalid, or
// one not dropped, is not.
func TestValidBatchRefusedAtAdmission(t *testing.T) {
	request := func(corrupt bool) []byte {
		batch := wire.EncodeBatch(wire.BatchHeader{OriginTimestamp: 9}, []wire.Message{{ID: wire.U128{Lo: 1}, Payload: []byte("m")}})
		if corrupt {
			batch[len(batch)-1] ^= 1
		}
		// The routing prefix of the Go SDK's golden body (wire.md 12.A2):
		// stream 1, topic 2, balanced, and the count.
		prefix := []byte{1, 4, 1, 0, 0, 0, 1, 4, 2, 0, 0, 0, 1, 0, 1, 0, 0, 0}
		body := binary.LittleEndian.AppendUint32(nil, uint32(len(prefix)))
		body = append(append(body, prefix...), batch...)
		return wire.BuildFrame(&wire.RequestHeader{Client: wire.U128{Lo: 3}, Request: 4, Session: 2, Operation: wire.OperationSendMessages}, body)
	}
	for _, tc := range []struct {
		name    string
		corrupt bool
		probes  []string
		want    bool
	}{
		{"a valid batch dropped", false, []string{checker.BatchRefusedProbe}, true},
		{"a rotten batch dropped", true, []string{checker.BatchRefusedProbe}, false},
		{"a valid batch admitted", false, []string{"partition plane: something else"}, false},
	} {
		c := refusalsChecker()
		c.AdmissionProbes(1, 0, request(tc.corrupt), tc.probes)
		if v := c.Violation(); (v != nil) != tc.want || v != nil && v.Name != checker.ValidBatchRefused {
			t.Errorf("%s: %v", tc.name, v)
		}
	}
}
