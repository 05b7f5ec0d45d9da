package sim

// peerLinked reports whether replicas r and p can reach each other: both are
// up, and each one's bus holds an established connection to the other (a
// connection closed at one end only, by a reset or by a frame the receiver
// refused, still lets the other end send into it, and what it sends is
// lost). The checker asks it to date the quiet cluster's promises whose
// fulfilment is a frame between the two (checker.SetLinks); it draws
// nothing and changes nothing.
func (c *Cluster) peerLinked(r, p uint8) bool {
	if int(r) >= len(c.Replicas) || int(p) >= len(c.Replicas) || r == p {
		return false
	}
	a, b := c.Replicas[r], c.Replicas[p]
	if !a.up || !b.up || a.rep == nil || b.rep == nil {
		return false
	}
	return a.rep.Bus().Established(p) && b.rep.Bus().Established(r)
}
