package sim

import (
	"fmt"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/workload"
)

// ClientNode is one workload client on the simulated network.
type ClientNode struct {
	c      *Cluster
	node   network.NodeID
	index  int
	wl     *workload.Client
	ticker *kernel.Ticker
	// Completions are this client's completed invocations, in order.
	Completions []workload.Completion
	// Invocations are this client's invocations, in order.
	Invocations []workload.Invocation
	// OnInvoke, OnComplete and OnTimeout, when set, see the client's history
	// as it happens, after the checker (the VOPR's trace).
	OnInvoke   func(workload.Invocation)
	OnComplete func(workload.Completion)
	OnTimeout  func(workload.Timeout)
}

func newClientNode(c *Cluster, node network.NodeID, index int, mix *workload.Mix, requests, timeoutTicks, thinkTicks int) *ClientNode {
	cn := &ClientNode{c: c, node: node, index: index}
	cn.wl = workload.New(workload.Config{Index: index, Replicas: c.Options.Replicas, Requests: requests,
		TimeoutTicks: timeoutTicks, Rand: c.Streams.Stream(fmt.Sprintf("client.%d", index)), Mix: mix, ThinkTicks: thinkTicks, LogoutProbability: c.Options.ClientLogoutProbability},
		clientNet{cn}, c)
	c.Net.AddNode(node, false, cn)
	cn.ticker = kernel.NewTicker(c.Loop, int32(node), cn.wl.Tick)
	return cn
}

// Workload returns the client.
func (cn *ClientNode) Workload() *workload.Client { return cn.wl }

// Submit queues an op (scripted tests).
func (cn *ClientNode) Submit(op workload.Op) { cn.wl.Submit(op) }

// Done reports whether the client registered and every request ended.
func (cn *ClientNode) Done() bool { return cn.wl.Done() }

// Endpoint: the network's events for the client.

func (cn *ClientNode) Accepted(network.ConnID, network.NodeID) {
	panic("sim: a client accepted a connection")
}
func (cn *ClientNode) Connected(c network.ConnID)  { cn.wl.Connected(workload.ConnID(c)) }
func (cn *ClientNode) DialFailed(c network.ConnID) { cn.wl.DialFailed(workload.ConnID(c)) }
func (cn *ClientNode) Closed(c network.ConnID)     { cn.wl.Closed(workload.ConnID(c)) }
func (cn *ClientNode) Received(c network.ConnID, frame []byte) {
	cn.wl.Received(workload.ConnID(c), frame)
}

// clientNet adapts the network to the workload client.
type clientNet struct{ cn *ClientNode }

func (t clientNet) Dial(target int) workload.ConnID {
	return workload.ConnID(t.cn.c.Net.Dial(t.cn.node, network.NodeID(target)))
}

func (t clientNet) Send(c workload.ConnID, frame []byte) bool {
	t.cn.c.Checker.FromClient(t.cn.c.Loop.Now(), t.cn.index, frame)
	return t.cn.c.Net.Send(network.ConnID(c), t.cn.node, frame)
}

func (t clientNet) Close(c workload.ConnID) { t.cn.c.Net.Close(network.ConnID(c), t.cn.node) }

func (t clientNet) Now() int64 { return t.cn.c.Loop.Now() }

// Invoke implements workload.Recorder: the checker sees the history.
func (c *Cluster) Invoke(inv workload.Invocation) {
	cn := c.Clients[inv.Client]
	cn.Invocations = append(cn.Invocations, inv)
	c.Checker.Invoke(inv)
	c.Requests++
	if cn.OnInvoke != nil {
		cn.OnInvoke(inv)
	}
}

// Complete implements workload.Recorder.
func (c *Cluster) Complete(done workload.Completion) {
	cn := c.Clients[done.Client]
	cn.Completions = append(cn.Completions, done)
	c.Checker.Complete(done)
	if cn.OnComplete != nil {
		cn.OnComplete(done)
	}
}

// TimedOut implements workload.TimeoutRecorder: only the trace wants it.
func (c *Cluster) TimedOut(t workload.Timeout) {
	if cn := c.Clients[t.Client]; cn.OnTimeout != nil {
		cn.OnTimeout(t)
	}
}
