package wire

// RequestPreparesHeader asks a peer for the journaled prepares from_op..to_op
// of a group (wire.md 5.8).
type RequestPreparesHeader struct {
	Prefix `json:"-"`
	Nonce  U128   `json:"nonce"`
	FromOp uint64 `json:"from_op"`
	ToOp   uint64 `json:"to_op"`
	Group  uint64 `json:"group"`
}

const (
	offRPNonce  = 128
	offRPFromOp = 144
	offRPToOp   = 152
	offRPGroup  = 160
)

// Encode writes x as a RequestPrepares (18).
func (x *RequestPreparesHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandRequestPrepares)
	putU128(h[offRPNonce:], x.Nonce)
	put64(h[offRPFromOp:], x.FromOp)
	put64(h[offRPToOp:], x.ToOp)
	put64(h[offRPGroup:], x.Group)
}

// Decode reads x from h without validating it.
func (x *RequestPreparesHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Nonce = getU128(h[offRPNonce:])
	x.FromOp = u64(h[offRPFromOp:])
	x.ToOp = u64(h[offRPToOp:])
	x.Group = u64(h[offRPGroup:])
}

// RepairRangeHeader is the shared layout of RepairDone (20) and RangeEvicted
// (21), wire.md 5.10 and correction 0.3. On RepairDone, Op is the last op
// served (from_op-1 when none); on RangeEvicted, the oldest op retained, or
// one past the scanned range when nothing in it is.
type RepairRangeHeader struct {
	Prefix `json:"-"`
	Nonce  U128   `json:"nonce"`
	Op     uint64 `json:"op"`
	Group  uint64 `json:"group"`
}

const (
	offRRNonce = 128
	offRROp    = 144
	offRRGroup = 152
)

// Encode writes x. Command must be RepairDone or RangeEvicted.
func (x *RepairRangeHeader) Encode(h *Header) {
	if x.Command != CommandRepairDone && x.Command != CommandRangeEvicted {
		panic("wire: RepairRangeHeader with command " + x.Command.String())
	}
	x.encodePrefix(h, x.Command)
	putU128(h[offRRNonce:], x.Nonce)
	put64(h[offRROp:], x.Op)
	put64(h[offRRGroup:], x.Group)
}

// Decode reads x from h without validating it.
func (x *RepairRangeHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Nonce = getU128(h[offRRNonce:])
	x.Op = u64(h[offRROp:])
	x.Group = u64(h[offRRGroup:])
}
