package metadata

import (
	"reflect"

	"github.com/iggy-vopr/vopr/replica/wire"
)

func decodeBody(op wire.Operation, b []byte) (any, error) { return DecodeRequest(op, b) }

func equalBodies(a, b any) bool { return reflect.DeepEqual(a, b) }
