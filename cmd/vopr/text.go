package main

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// writeText prints one readable block for the frame.
func (r *frameReport) writeText(w *bufio.Writer) {
	status := "valid"
	if !r.Valid {
		status = "INVALID: " + r.Error
	}
	fmt.Fprintf(w, "frame %d at offset %d: %s (%d), %d bytes, integrity %s, %s\n",
		r.Index, r.Offset, r.Command, r.CommandID, r.Size, r.Integrity, status)
	if r.AtNs != nil {
		fmt.Fprintf(w, "  delivered at %.6f s from replica %d to replica %d\n", float64(*r.AtNs)/1e9, *r.From, *r.To)
	}
	fmt.Fprintf(w, "  %-22s %d\n  %-22s %d\n  %-22s %d\n", "view", r.View, "release", r.Release, "replica", r.Replica)
	fmt.Fprintf(w, "  %-22s %s\n  %-22s %s\n  %-22s %s\n", "cluster", r.Cluster, "checksum", r.Checksum,
		"checksum_body", r.ChecksumBody)
	writeMembers(w, "  ", r.Fields)
	w.WriteByte('\n')
}

func writeMembers(w *bufio.Writer, indent string, o object) {
	for _, m := range o {
		switch v := m.value.(type) {
		case object:
			fmt.Fprintf(w, "%s%s\n", indent, m.name)
			writeMembers(w, indent+"  ", v)
		case []object:
			if len(v) == 0 {
				fmt.Fprintf(w, "%s%-22s (none)\n", indent, m.name)
			}
			for i, e := range v {
				fmt.Fprintf(w, "%s%-22s %s\n", indent, fmt.Sprintf("%s[%d]", m.name, i), inline(e))
			}
		default:
			fmt.Fprintf(w, "%s%-22s %s\n", indent, m.name, textValue(m.name, m.value))
		}
	}
}

func inline(o object) string {
	parts := make([]string, len(o))
	for i, m := range o {
		parts[i] = m.name + " " + textValue(m.name, m.value)
	}
	return strings.Join(parts, "  ")
}

// textValue renders a field for people: enums with their names, groups with
// the plane they name.
func textValue(name string, v any) string {
	switch x := v.(type) {
	case wire.Operation:
		return fmt.Sprintf("%d (%s)", uint8(x), x)
	case wire.EvictionReason:
		return fmt.Sprintf("%d (%s)", uint8(x), x)
	case wire.ForwardRegisterOutcome:
		return fmt.Sprintf("%d (%s)", uint8(x), x)
	case wire.ForwardLogoutOutcome:
		return fmt.Sprintf("%d (%s)", uint8(x), x)
	case wire.HandshakeStatus:
		return fmt.Sprintf("%d (%s)", uint8(x), x)
	case uint64:
		if name == "group" {
			if x == wire.MetadataGroup {
				return fmt.Sprintf("%#x (metadata)", x)
			}
			// vopr's replicas route a partition by the group id the
			// metadata minted (DEVIATIONS.md 46); Iggy's by its packing.
			return fmt.Sprintf("%#x (vopr: partition group %d; Iggy's packing: %s)", x, x, wire.DescribeGroup(x))
		}
		if name == "checksum" {
			return fmt.Sprintf("%#016x", x)
		}
	}
	return fmt.Sprint(v)
}
