package wire

import "testing"

func TestVerifyMAC(t *testing.T) {
	current := DeriveMACKey([]byte(b3Secret))
	previous := DeriveMACKey([]byte("an-older-secret-of-at-least-32-bytes"))
	other := DeriveMACKey([]byte("someone-else-entirely-32-bytes-long!"))
	base := b3Transcript(false)
	mac := base.MAC(current, MACDialer)

	if !base.VerifyMAC(mac, MACDialer, current, nil) {
		t.Fatal("own MAC rejected")
	}
	// Rotation: a MAC made with the old secret verifies only while the old
	// secret is configured as previous.
	old := base.MAC(previous, MACDialer)
	if base.VerifyMAC(old, MACDialer, current, nil) {
		t.Error("old-key MAC accepted without a rotation window")
	}
	if !base.VerifyMAC(old, MACDialer, current, &previous) {
		t.Error("old-key MAC rejected during rotation")
	}
	if base.VerifyMAC(base.MAC(other, MACDialer), MACDialer, current, &previous) {
		t.Error("foreign-key MAC accepted")
	}

	// Every transcript field is bound.
	tests := []struct {
		name   string
		mutate func(*Transcript) MACDirection
	}{
		{"reflection", func(*Transcript) MACDirection { return MACAcceptor }},
		{"cluster", func(tr *Transcript) MACDirection { tr.Cluster.Lo++; return MACDialer }},
		{"ids swapped", func(tr *Transcript) MACDirection { tr.Dialer, tr.Acceptor = tr.Acceptor, tr.Dialer; return MACDialer }},
		{"nonces swapped", func(tr *Transcript) MACDirection { tr.NonceD, tr.NonceA = tr.NonceA, tr.NonceD; return MACDialer }},
		{"nonce_d", func(tr *Transcript) MACDirection { tr.NonceD[31] ^= 1; return MACDialer }},
		{"nonce_a", func(tr *Transcript) MACDirection { tr.NonceA[0] ^= 1; return MACDialer }},
		{"tls mode", func(tr *Transcript) MACDirection { tr.TLS = true; return MACDialer }},
	}
	for _, tt := range tests {
		tr := base
		dir := tt.mutate(&tr)
		if tr.VerifyMAC(mac, dir, current, &previous) {
			t.Errorf("%s: MAC still verifies", tt.name)
		}
	}
	// TLS channel binding: two TLS sessions (a relay) have different exporters.
	a, b := b3Transcript(true), b3Transcript(true)
	b.Exporter[0] ^= 0xff
	if b.VerifyMAC(a.MAC(current, MACAcceptor), MACAcceptor, current, nil) {
		t.Error("MAC verified across different TLS exporters")
	}
}

func TestHandshakeHeaderLayout(t *testing.T) {
	tr := b3Transcript(false)
	x := HandshakeHeader{Prefix: Prefix{Cluster: ClusterID("iggy-cluster"), Command: CommandReplicaChallenge, Replica: 1},
		Nonce: tr.NonceA, MAC: tr.MAC(DeriveMACKey([]byte(b3Secret)), MACAcceptor), Status: HandshakeClusterMismatch}
	frame := BuildFrame(&x, nil)
	h := HeaderOf(frame)
	if !h.Checksum().IsZero() || !h.ChecksumBody().IsZero() || h.Size() != HeaderSize {
		t.Fatalf("handshake prefix: checksum %s body %s size %d", h.Checksum(), h.ChecksumBody(), h.Size())
	}
	if frame[128] != 0x22 || frame[159] != 0x22 || frame[160] != x.MAC[0] || frame[192] != 2 || !allZero(frame[193:]) {
		t.Fatalf("handshake area %x", frame[128:])
	}
	if err := Validate(frame); err != nil {
		t.Fatalf("Validate: %v", err)
	}
}
