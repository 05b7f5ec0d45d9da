package partition

import "github.com/iggy-vopr/vopr/replica/wire"

// canaryApplyOffset is canary_offset_at_prepare's bug: a consumer offset
// store or delete applied when the replica prepares it (the primary's
// Stamp, a backup's Admit), before it commits.
func (p *Plane) canaryApplyOffset(x *wire.PrepareHeader, body []byte) {
	store := x.Operation == wire.OperationStoreConsumerOffset
	if !store && x.Operation != wire.OperationDeleteConsumerOffset {
		return
	}
	r, err := DecodeOffsetRequest(body, store)
	switch {
	case err != nil:
	case store:
		p.StoreOffset(ConsumerKey(r.Consumer), r.Offset)
	default:
		p.DeleteOffset(ConsumerKey(r.Consumer))
	}
}
