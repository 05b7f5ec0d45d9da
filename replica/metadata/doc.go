// Package metadata is the first metadata state machine of vopr's replica: the
// request and reply bodies of Register, Logout, CreateStream, UpdateStream,
// DeleteStream, CreateTopic, DeleteTopic, CreatePartitions and
// DeletePartitions, the primary's checks and projection before consensus,
// and the deterministic apply of committed prepares
// (../../shared/spec/client-ops.md sections 1-5; section numbers below refer
// to it).
//
// It implements the [raw] consensus-plane semantics as the replica's
// contract, with one addition: every body is decoded before consensus
// (section 10 item 1), so no committed prepare can fail to apply. It has no
// dependency on the rest of the replica, so the checker's reference model
// (Model) is this same code applied in commit order.
//
// # The path of a request
//
//  1. clients.Table.CheckRequest (replays, evictions, drops) answers New;
//  2. Preflight(op, body) decodes the body and refuses what this slice does
//     not dispatch (see Preflight for every answer);
//  3. the request waits for a prepare slot; the primary then calls
//     Project(op, body, alloc), which rewrites CreateTopic into 64 and
//     CreatePartitions into 65 with fresh consensus group ids, or refuses
//     with an Eviction InvalidRequestBody;
//  4. every replica, at commit, calls State.Apply(prepare, body) and caches
//     clients.BuildReply(prepare, reply) in its client table.
//
// # Decisions where the spec leaves a choice
//
//   - Undecodable bodies are denied before consensus with status
//     InvalidCommand (3) (section 10 item 1), CreateTopic and CreatePartitions
//     included (the shell path's answer; the raw path would evict with
//     InvalidRequestBody). Register and Logout bodies must be empty on this
//     path; any byte is undecodable.
//   - Bodies longer than RequestBodyMax are denied the same way; fixed-layout
//     bodies may carry ignored trailing bytes up to that length, replicated
//     verbatim, as Iggy does.
//   - Internal operations 64-68 sent by a client are evicted with
//     InvalidRequestOperation (4), 68 included (section 10 item 11).
//   - Valid operations outside this slice (NonReplicated, PurgeStream,
//     UpdateTopic, PurgeTopic, DeleteSegments, consumer groups, users, PATs,
//     the partition plane) are denied with status FeatureUnavailable (5).
//   - A CreateTopic or CreatePartitions of more than 1000 partitions is
//     denied with status TooManyPartitions (2015) before consensus (the shell
//     answer); the raw path would allocate that many group ids. A count of 0
//     passes, as on the raw path (CreatePartitions of 0 commits a success
//     that adds nothing).
//   - CreateTopic options are checked only by the projection (the raw path):
//     an unknown key, a bad value, an explicit segment_size outside [1 MiB,
//     1 GiB] or not a multiple of 512, or a max_topic_size below the segment
//     size evict with InvalidRequestBody (5). String option values follow
//     Iggy for compression, booleans, counts and expiries (humantime), but a
//     byte size written as text must be a plain number of bytes or one of
//     Iggy's keywords: unit suffixes ("128MiB") are refused as a bad value.
//   - Register and Logout replies have an empty body (the [raw] reply; the
//     shell path's LoginRegisterResponse payload is encoded by
//     LoginRegisterResponse for the day a login exists).
//   - Authorization in apply (section 2.5): root (user 0) is always
//     allowed. Root is the only user in this slice and no other user has a
//     permission, so a prepare acting as any other user commits
//     Unauthorized (41), except that an op whose stream (or stream and topic)
//     does not resolve goes on to its NotFound rejection.
//   - The consensus group id counter is seeded from State.HighestGroupID, the
//     highest id any successful CreateTopic/CreatePartitions committed,
//     whether its partition still exists or not (Iggy rescans the live
//     partitions, so a deleted partition's id can be handed out again after
//     a restart; vopr never reuses one).
//   - UpdateStream commits InvalidOptionValue when the patched options would
//     no longer fit one options block (1024 pairs, 100 000 bytes); Iggy lets
//     the map grow until the stream cannot be read back.
//   - Replicated bodies (64, 65) must be consumed exactly; a primary is the
//     only writer, so extra bytes mean a bug.
package metadata
