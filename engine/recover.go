package engine

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/store"
)

// recoverInterrupted puts the orders that were running when the process stopped back into the
// queue at their old place, in one transaction. An order that has already started
// MaxAttempts times fails instead: something about it keeps taking the process down.
func (e *Engine) recoverInterrupted() error {
	return e.commit(func(tx *bolt.Tx, ob *outbox) error {
		running := store.Queue(tx, store.BucketQueueRunning)
		var ids []string
		if err := running.ForEach(func(k, _ []byte) error {
			ids = append(ids, string(k))
			return nil
		}); err != nil {
			return err
		}
		now := e.now()
		for _, id := range ids {
			r, err := getRecord(tx, id)
			if err != nil {
				return err
			}
			if r == nil || r.Status != core.OrderRunning {
				if err := running.Delete([]byte(id)); err != nil { // stale entry
					return err
				}
				continue
			}
			if seq := store.Btoi(running.Get([]byte(id))); seq != 0 {
				r.Seq = seq
			}
			r.ETASeconds = nil
			if r.Attempts >= e.cfg.MaxAttempts {
				r.Error = fmt.Sprintf("processing was interrupted %d times (the service stopped while this order ran); giving up", r.Attempts)
				r.ErrorCode = CodeInterrupted
				r.Stage = StageFailed
				if err := move(tx, r, core.OrderFailed, now); err != nil {
					return err
				}
			} else {
				r.Progress = 0
				r.Stage = StageQueued
				if err := move(tx, r, core.OrderPending, now); err != nil {
					return err
				}
			}
			ob.order(r)
		}
		return nil
	})
}
