package wire

import (
	"crypto/subtle"
	"encoding/hex"
	"strconv"

	"lukechampine.com/blake3"
)

// Handshake constants (wire.md 6).
const (
	// MACKeyContext is the BLAKE3 derive_key context for the MAC key.
	MACKeyContext = "apache-iggy replica-auth v1 psk->mac-key"
	// MACDomainTag opens every MAC transcript.
	MACDomainTag = "apache-iggy replica-auth v1"
	// TranscriptSize is the length of the MAC transcript.
	TranscriptSize = 143
	// SharedSecretMinLen is the shortest shared secret the config accepts.
	SharedSecretMinLen = 32
	// TLSExporterLabel is the RFC 8446 exporter label used for channel binding.
	TLSExporterLabel = "iggy replica psk binding"
)

// Bytes32 is a 32-byte nonce, MAC, key or exporter, in wire order.
type Bytes32 [32]byte

// String returns 64 lowercase hex digits in wire order.
func (b Bytes32) String() string { return hex.EncodeToString(b[:]) }

// MarshalText encodes b as 64 lowercase hex digits.
func (b Bytes32) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// IsZero reports whether every byte of b is zero.
func (b Bytes32) IsZero() bool { return b == Bytes32{} }

// HandshakeStatus is byte 192 of a ReplicaChallenge (wire.md 6.6). Every
// nonzero value is a rejection.
type HandshakeStatus uint8

// Handshake statuses. Only 0..3 are put on the wire; 4 and 5 are log labels.
const (
	HandshakeOk              HandshakeStatus = 0
	HandshakeUnknownCommand  HandshakeStatus = 1
	HandshakeClusterMismatch HandshakeStatus = 2
	HandshakeDirectionalRule HandshakeStatus = 3
	HandshakeAuthRequired    HandshakeStatus = 4
	HandshakeMACMismatch     HandshakeStatus = 5
)

// HandshakeHeader is a ReplicaHello (14), ReplicaChallenge (15) or
// ReplicaFinish (16): a raw generic header with a nonce at 128, a MAC at 160
// and, on a Challenge, a status at 192 (wire.md 5.19).
type HandshakeHeader struct {
	Prefix `json:"-"`
	Nonce  Bytes32         `json:"nonce"`
	MAC    Bytes32         `json:"mac"`
	Status HandshakeStatus `json:"status"`
}

const (
	offHSNonce  = 128
	offHSMAC    = 160
	offHSStatus = 192
)

// Encode writes x. Command must be one of the three handshake commands.
func (x *HandshakeHeader) Encode(h *Header) {
	if !x.Command.IsHandshake() {
		panic("wire: HandshakeHeader with command " + x.Command.String())
	}
	x.encodePrefix(h, x.Command)
	copy(h[offHSNonce:offHSNonce+32], x.Nonce[:])
	copy(h[offHSMAC:offHSMAC+32], x.MAC[:])
	h[offHSStatus] = byte(x.Status)
}

// Decode reads x from h without validating it.
func (x *HandshakeHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	copy(x.Nonce[:], h[offHSNonce:offHSNonce+32])
	copy(x.MAC[:], h[offHSMAC:offHSMAC+32])
	x.Status = HandshakeStatus(h[offHSStatus])
}

// DeriveMACKey derives the handshake MAC key from a shared secret's raw UTF-8
// bytes: BLAKE3 derive_key with context MACKeyContext (wire.md 6.1).
func DeriveMACKey(secret []byte) Bytes32 {
	var key Bytes32
	blake3.DeriveKey(key[:], MACKeyContext, secret)
	return key
}

// MACDirection is the last transcript byte: whose MAC it is.
type MACDirection uint8

// MAC directions (wire.md 6.2).
const (
	MACDialer   MACDirection = 1 // the dialer's MAC, sent in ReplicaFinish
	MACAcceptor MACDirection = 2 // the acceptor's MAC, sent in ReplicaChallenge
)

// Transcript holds what both sides MAC: the cluster, the two ids in
// dialer/acceptor order (not self/peer), both nonces, and the TLS exporter
// when the channel is bound to a TLS session.
type Transcript struct {
	Cluster  U128
	Dialer   uint8 // the lower replica id
	Acceptor uint8 // the higher replica id
	NonceD   Bytes32
	NonceA   Bytes32
	TLS      bool    // mode byte 1; Exporter is folded in
	Exporter Bytes32 // RFC 8446 exporter; ignored (written zero) in plaintext mode
}

// Bytes returns the 143-byte transcript for direction dir (wire.md 6.2).
func (t *Transcript) Bytes(dir MACDirection) [TranscriptSize]byte {
	var b [TranscriptSize]byte
	copy(b[0:27], MACDomainTag)
	putU128(b[27:43], t.Cluster)
	b[43] = t.Dialer
	b[44] = t.Acceptor
	copy(b[45:77], t.NonceD[:])
	copy(b[77:109], t.NonceA[:])
	if t.TLS {
		b[109] = 1
		copy(b[110:142], t.Exporter[:])
	}
	b[142] = byte(dir)
	return b
}

// MAC returns the BLAKE3 keyed hash of the transcript for direction dir.
func (t *Transcript) MAC(key Bytes32, dir MACDirection) Bytes32 {
	msg := t.Bytes(dir)
	hasher := blake3.New(32, key[:])
	hasher.Write(msg[:])
	var mac Bytes32
	hasher.Sum(mac[:0])
	return mac
}

// VerifyMAC reports whether mac is the MAC for direction dir under the
// current key or, during a rotation window, the previous one (nil when no
// previous secret is configured). Comparisons take constant time.
func (t *Transcript) VerifyMAC(mac Bytes32, dir MACDirection, current Bytes32, previous *Bytes32) bool {
	want := t.MAC(current, dir)
	ok := subtle.ConstantTimeCompare(mac[:], want[:]) == 1
	if previous != nil {
		old := t.MAC(*previous, dir)
		ok = subtle.ConstantTimeCompare(mac[:], old[:]) == 1 || ok
	}
	return ok
}

var handshakeStatusNames = [...]string{"Ok", "UnknownCommand", "ClusterMismatch", "DirectionalRule",
	"AuthRequired", "MacMismatch"}

// String returns the status's name; every value outside 0..5 reads as a
// rejection, as UnknownCommand does.
func (s HandshakeStatus) String() string {
	if int(s) < len(handshakeStatusNames) {
		return handshakeStatusNames[s]
	}
	return "HandshakeStatus(" + strconv.Itoa(int(s)) + ")"
}
