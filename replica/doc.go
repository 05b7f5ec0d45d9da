// Package replica is one Iggy replica process, sans-I/O: the message bus,
// the metadata plane's consensus group over the durable journal, the client
// table and the metadata state machine, and the client port. It talks to the
// world only through interfaces it declares (peer and client transports, a
// clock, an event sink, a random source) and storage.Device, so the
// simulator drives it with simulated ones and a real server could drive it
// with sockets and files (../shared/DESIGN.md, "The replica is a state
// machine").
//
// Everything arrives as a call: Tick every 10 ms, connection events and
// frames from the transports, completions from the device (through the
// journal). Nothing here starts a goroutine or reads a clock.
package replica
