package wire

import "strconv"

// Operation is the operation byte of a Request, Prepare, PrepareOk or Reply
// header (wire.md 10.1).
type Operation uint8

// The defined operations. Any other byte fails the typed bit-pattern check.
const (
	OperationReserved                        Operation = 0
	OperationRegister                        Operation = 1
	OperationNonReplicated                   Operation = 2
	OperationLogout                          Operation = 3
	OperationCreateTopicWithAssignments      Operation = 64
	OperationCreatePartitionsWithAssignments Operation = 65
	OperationRemoveConsumerGroupMember       Operation = 66
	OperationCompleteConsumerGroupRevocation Operation = 67
	OperationTruncatePartition               Operation = 68
	OperationCreateStream                    Operation = 128
	OperationUpdateStream                    Operation = 129
	OperationDeleteStream                    Operation = 130
	OperationPurgeStream                     Operation = 131
	OperationCreateTopic                     Operation = 132
	OperationUpdateTopic                     Operation = 133
	OperationDeleteTopic                     Operation = 134
	OperationPurgeTopic                      Operation = 135
	OperationCreatePartitions                Operation = 136
	OperationDeletePartitions                Operation = 137
	OperationDeleteSegments                  Operation = 138
	OperationCreateConsumerGroup             Operation = 139
	OperationDeleteConsumerGroup             Operation = 140
	OperationCreateUser                      Operation = 141
	OperationUpdateUser                      Operation = 142
	OperationDeleteUser                      Operation = 143
	OperationChangePassword                  Operation = 144
	OperationUpdatePermissions               Operation = 145
	OperationCreatePersonalAccessToken       Operation = 146
	OperationDeletePersonalAccessToken       Operation = 147
	OperationJoinConsumerGroup               Operation = 148
	OperationLeaveConsumerGroup              Operation = 149
	OperationSendMessages                    Operation = 160
	OperationStoreConsumerOffset             Operation = 161
	OperationDeleteConsumerOffset            Operation = 162
)

type operationInfo struct {
	name string
	// clientCode is the client command code that maps to this operation
	// (0 when the operation is internal or has several codes).
	clientCode uint32
}

// operationTable is indexed by the operation byte; an empty name marks an
// undefined discriminant.
var operationTable = [256]operationInfo{
	OperationReserved:                        {"Reserved", 0},
	OperationRegister:                        {"Register", 40}, // also 45 (login with a personal access token)
	OperationNonReplicated:                   {"NonReplicated", 0},
	OperationLogout:                          {"Logout", 39},
	OperationCreateTopicWithAssignments:      {"CreateTopicWithAssignments", 0},
	OperationCreatePartitionsWithAssignments: {"CreatePartitionsWithAssignments", 0},
	OperationRemoveConsumerGroupMember:       {"RemoveConsumerGroupMember", 0},
	OperationCompleteConsumerGroupRevocation: {"CompleteConsumerGroupRevocation", 0},
	OperationTruncatePartition:               {"TruncatePartition", 0},
	OperationCreateStream:                    {"CreateStream", 202},
	OperationUpdateStream:                    {"UpdateStream", 204},
	OperationDeleteStream:                    {"DeleteStream", 203},
	OperationPurgeStream:                     {"PurgeStream", 205},
	OperationCreateTopic:                     {"CreateTopic", 302},
	OperationUpdateTopic:                     {"UpdateTopic", 304},
	OperationDeleteTopic:                     {"DeleteTopic", 303},
	OperationPurgeTopic:                      {"PurgeTopic", 305},
	OperationCreatePartitions:                {"CreatePartitions", 402},
	OperationDeletePartitions:                {"DeletePartitions", 403},
	OperationDeleteSegments:                  {"DeleteSegments", 503},
	OperationCreateConsumerGroup:             {"CreateConsumerGroup", 602},
	OperationDeleteConsumerGroup:             {"DeleteConsumerGroup", 603},
	OperationCreateUser:                      {"CreateUser", 33},
	OperationUpdateUser:                      {"UpdateUser", 35},
	OperationDeleteUser:                      {"DeleteUser", 34},
	OperationChangePassword:                  {"ChangePassword", 37},
	OperationUpdatePermissions:               {"UpdatePermissions", 36},
	OperationCreatePersonalAccessToken:       {"CreatePersonalAccessToken", 42},
	OperationDeletePersonalAccessToken:       {"DeletePersonalAccessToken", 43},
	OperationJoinConsumerGroup:               {"JoinConsumerGroup", 604},
	OperationLeaveConsumerGroup:              {"LeaveConsumerGroup", 605},
	OperationSendMessages:                    {"SendMessages", 101},
	OperationStoreConsumerOffset:             {"StoreConsumerOffset", 121},
	OperationDeleteConsumerOffset:            {"DeleteConsumerOffset", 122},
}

// Valid reports whether o is a defined discriminant (Reserved included: it is
// a valid bit pattern, the one that marks a DVC blank entry).
func (o Operation) Valid() bool { return operationTable[o].name != "" }

// String returns the operation's name, or "Operation(n)" when undefined.
func (o Operation) String() string {
	if !o.Valid() {
		return "Operation(" + strconv.Itoa(int(o)) + ")"
	}
	return operationTable[o].name
}

// ClientCode returns the client command code that maps to o, or 0 for
// internal operations and those without a single code (NonReplicated).
// Register also answers to code 45 (login with a personal access token).
func (o Operation) ClientCode() uint32 { return operationTable[o].clientCode }

// IsMetadata reports whether o is replicated on the metadata plane:
// Register, Logout, the internal operations 64..68 and the client operations
// 128..149 except DeleteSegments (138), which is resolved to TruncatePartition.
func (o Operation) IsMetadata() bool {
	switch {
	case o == OperationRegister || o == OperationLogout:
		return true
	case o >= OperationCreateTopicWithAssignments && o <= OperationTruncatePartition:
		return true
	case o >= OperationCreateStream && o <= OperationLeaveConsumerGroup:
		return o != OperationDeleteSegments
	}
	return false
}

// IsPartition reports whether o is replicated on a partition plane (160..162).
func (o Operation) IsPartition() bool {
	return o >= OperationSendMessages && o <= OperationDeleteConsumerOffset
}

// Operations returns every defined operation in ascending order.
func Operations() []Operation {
	var ops []Operation
	for i := range operationTable {
		if op := Operation(i); op.Valid() {
			ops = append(ops, op)
		}
	}
	return ops
}
