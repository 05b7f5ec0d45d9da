package storage_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
	"pgregory.net/rapid"
)

// model is an independent reference for the device's durability semantics
// (no faults): it keeps every completed write, where the device prunes.
type model struct {
	sectorSize   int
	durable      [][]byte       // per sector: what a crash that loses everything leaves
	completed    [][]modelWrite // per sector: completed writes not yet durable, in completion order
	inflight     map[int]modelInflight
	completedSeq uint64
	epoch        int // bumped at each crash
	pending      int // callbacks owed in the current epoch
	nextID       int
}

type modelWrite struct {
	seq  uint64
	data []byte // one sector
}

type modelInflight struct {
	sector uint64
	data   []byte
}

func (m *model) visible(s uint64) []byte {
	if c := m.completed[s]; len(c) > 0 {
		return c[len(c)-1].data
	}
	return m.durable[s]
}

// candidates returns every content a crash may land on sector s besides its
// durable bytes: each completed write not yet durable and each write in
// flight (ids sorted for a stable message).
func (m *model) candidates(s uint64) [][]byte {
	var out [][]byte
	for _, w := range m.completed[s] {
		out = append(out, w.data)
	}
	for id := range m.nextID {
		if w, ok := m.inflight[id]; ok && s >= w.sector && s < w.sector+uint64(len(w.data)/m.sectorSize) {
			k := int(s - w.sector)
			out = append(out, w.data[k*m.sectorSize:(k+1)*m.sectorSize])
		}
	}
	return out
}

// TestDurabilityModel drives a device with a random program of writes,
// reads, syncs, loop steps and crashes, against the model:
//   - reads see exactly the writes completed before the read completed;
//   - the device's durable bytes are, after every step, exactly those of the
//     newest write to each sector covered by a completed sync (so a sync
//     covers exactly the writes completed before it was issued, no more, no
//     less), which also means synced bytes survive any crash;
//   - after a crash each sector with a non-durable write holds its durable
//     bytes, one such write's bytes, or a torn mix (atom by atom) of the
//     durable bytes and one such write; every other sector is unchanged;
//   - no callback of an I/O issued before a crash ever runs, and every other
//     callback runs exactly once;
//   - data passed to Write is copied at the call.
func TestDurabilityModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		const sectorSize, atomBytes, sectors = 256, 32, 24
		seed := rapid.Uint64().Draw(rt, "seed")
		lost := rapid.Float64Range(0, 1).Draw(rt, "lost")
		torn := rapid.Float64Range(0, 1-lost).Draw(rt, "torn")
		loop := kernel.NewLoop()
		opts := quiet(flat(sectors, 4), sectorSize)
		opts.AtomBytes = atomBytes
		opts.CrashLostProbability, opts.CrashTornProbability = lost, torn
		dev := storage.NewSimDevice(loop, kernel.NewStreams(seed), 0, opts)

		m := &model{sectorSize: sectorSize, inflight: map[int]modelInflight{}}
		m.durable = make([][]byte, sectors)
		m.completed = make([][]modelWrite, sectors)
		for s := range uint64(sectors) {
			got, err := readSync(rt, loop, dev, s, 1)
			if err != nil {
				rt.Fatal(err)
			}
			m.durable[s] = got
		}

		checkDurable := func(when string) {
			buf := make([]byte, sectorSize)
			for s := range uint64(sectors) {
				dev.PeekDurable(s, buf)
				if !bytes.Equal(buf, m.durable[s]) {
					rt.Fatalf("%s: sector %d durable bytes differ from the model", when, s)
				}
			}
		}
		callback := func(what string) func() {
			epoch := m.epoch
			m.pending++
			return func() {
				if m.epoch != epoch {
					rt.Fatalf("%s issued before crash %d ran after it", what, m.epoch)
				}
				m.pending--
			}
		}

		steps := rapid.IntRange(1, 150).Draw(rt, "steps")
		for step := range steps {
			switch rapid.IntRange(0, 9).Draw(rt, "action") {
			case 0, 1, 2: // write
				s := rapid.Uint64Range(0, sectors-1).Draw(rt, "sector")
				count := rapid.Uint64Range(1, min(3, sectors-s)).Draw(rt, "count")
				data := pattern(rapid.Uint64().Draw(rt, "data"), int(count)*sectorSize)
				kept := bytes.Clone(data)
				id := m.nextID
				m.nextID++
				m.inflight[id] = modelInflight{sector: s, data: kept}
				fired := callback("write")
				dev.Write(s, data, func(err error) {
					fired()
					if err != nil {
						rt.Fatalf("write: %v", err)
					}
					delete(m.inflight, id)
					m.completedSeq++
					for k := range count {
						m.completed[s+k] = append(m.completed[s+k], modelWrite{m.completedSeq, kept[k*sectorSize : (k+1)*sectorSize]})
					}
				})
				clear(data) // the device copied it
			case 3, 4: // read
				s := rapid.Uint64Range(0, sectors-1).Draw(rt, "sector")
				count := rapid.Uint64Range(1, min(3, sectors-s)).Draw(rt, "count")
				buf := make([]byte, int(count)*sectorSize)
				fired := callback("read")
				dev.Read(s, buf, func(err error) {
					fired()
					if err != nil {
						rt.Fatalf("read: %v", err)
					}
					for k := range count {
						if !bytes.Equal(buf[k*sectorSize:(k+1)*sectorSize], m.visible(s+k)) {
							rt.Fatalf("read of sector %d does not see the last completed write", s+k)
						}
					}
				})
			case 5: // sync
				boundary := m.completedSeq
				fired := callback("sync")
				dev.Sync(func(err error) {
					fired()
					for s := range m.completed {
						newest := -1
						for k, w := range m.completed[s] {
							if w.seq <= boundary {
								newest = k
							}
						}
						if newest >= 0 {
							m.durable[s] = m.completed[s][newest].data
							m.completed[s] = m.completed[s][newest+1:]
						}
					}
				})
			case 6, 7, 8: // let time pass
				for range rapid.IntRange(1, 20).Draw(rt, "events") {
					if !loop.Step() {
						break
					}
				}
			case 9: // crash
				before := make([][][]byte, sectors)
				for s := range uint64(sectors) {
					before[s] = m.candidates(s)
				}
				report := dev.Crash()
				if report.Dropped != m.pending {
					rt.Fatalf("crash dropped %d I/Os, %d were in flight", report.Dropped, m.pending)
				}
				m.epoch++
				m.pending = 0
				clear(m.inflight)
				for s := range uint64(sectors) {
					got, err := readSync(rt, loop, dev, s, 1)
					if err != nil {
						rt.Fatal(err)
					}
					old := m.durable[s]
					ok := bytes.Equal(got, old)
					for _, c := range before[s] {
						ok = ok || tornFrom(got, old, c, atomBytes)
					}
					if !ok {
						rt.Fatalf("after crash sector %d (%d candidates) is neither old, new, nor a torn mix", s, len(before[s]))
					}
					m.durable[s] = got
					m.completed[s] = nil
				}
			}
			checkDurable(fmt.Sprintf("step %d", step))
		}
		drain(loop)
		checkDurable("end")
		if m.pending != 0 {
			rt.Fatalf("%d callbacks never ran", m.pending)
		}
		if dev.InFlight() != 0 {
			rt.Fatalf("%d I/Os still in flight on an idle loop", dev.InFlight())
		}
	})
}
