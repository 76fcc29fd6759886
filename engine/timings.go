package engine

import (
	"encoding/json"

	bolt "go.etcd.io/bbolt"

	"github.com/porchlight/porchlight/engine/store"
)

// keyStepTimings is where the pipeline's cost model is kept in the meta bucket, so
// progress weights and ETAs are right from the first order after a restart.
var keyStepTimings = []byte("engine_step_timings")

func (e *Engine) loadTimings() {
	var m map[string]float64
	err := e.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(store.BucketMeta).Get(keyStepTimings)
		if v == nil {
			return nil
		}
		return json.Unmarshal(v, &m)
	})
	if err != nil {
		e.log.Warn("ignoring saved step timings", "err", err)
		return
	}
	e.pipe.Timings().Load(m)
}

func (e *Engine) saveTimings() {
	snap := e.pipe.Timings().Snapshot()
	if len(snap) == 0 {
		return
	}
	v, err := json.Marshal(snap)
	if err == nil {
		err = e.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(store.BucketMeta).Put(keyStepTimings, v) })
	}
	if err != nil {
		e.log.Warn("save step timings", "err", err)
	}
}
