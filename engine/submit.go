package engine

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/pipeline"
)

// Limits of a batch.
const (
	MaxScenes       = 100
	MaxBatchNameLen = 200
)

// MaxBrackets is the most brackets one scene takes from the window, hot folders
// and process: photographers shoot up to nine. The API keeps catalog.MaxInputs
// (the spec's 5) unless a studio raises its own limit, which it checks itself.
const MaxBrackets = 9

// ResolveBrackets is catalog.ResolveScene for a scene of up to MaxBrackets
// brackets: the catalog's rules for n inputs (magic eraser takes one; more than one
// turns colour and lens correction on) hold alike for any n above one.
func ResolveBrackets(o core.Options, inBatch bool, n int) (core.Resolved, error) {
	return catalog.ResolveSceneUpTo(o, inBatch, n, MaxBrackets)
}

// Scene is one scene of a batch: its brackets and the options it overrides.
type Scene struct {
	Inputs  []string
	Options core.Options
}

// BatchRequest is a batch as submitted: shared options and the scenes.
type BatchRequest struct {
	Name     string
	Defaults core.Options
	Scenes   []Scene
}

// Submit validates and queues one order. With an Idempotency-Key, the same owner,
// key and request within IdempotencyTTL answer the first order again; the same key
// with a different request is a core.Conflict. Validation errors are core.Invalid
// naming the field ("inputs[2]", "quality").
func (e *Engine) Submit(ctx context.Context, owner string, inputs []string, opts core.Options, idempotencyKey string) (core.OrderSummary, error) {
	if owner == "" {
		return core.OrderSummary{}, core.Unauthorized("an order needs an owner key")
	}
	if err := checkIdempotencyKey(idempotencyKey); err != nil {
		return core.OrderSummary{}, err
	}
	fp, err := fingerprint("order", inputs, opts)
	if err != nil {
		return core.OrderSummary{}, err
	}
	if id, ok, err := e.idempotentHit(ctx, owner, idempotencyKey, kindOrder, fp); err != nil || ok {
		if err != nil {
			return core.OrderSummary{}, err
		}
		return e.Order(ctx, owner, id)
	}

	ins, res, err := e.validateScene(owner, inputs, opts, false)
	if err != nil {
		return core.OrderSummary{}, err
	}
	now := e.now()
	r := &core.Order{
		ID: uuid.NewString(), Owner: owner, Status: core.OrderPending, Inputs: ins,
		Options: opts, Resolved: res, Stage: StageQueued, CreatedAt: now, UpdatedAt: now,
	}
	var replayID string
	err = e.commit(ctx, func(tx core.OrdersTx, ob *outbox) error {
		id, hit, err := idempotencyLookup(tx, owner, idempotencyKey, kindOrder, fp, now, e.cfg.IdempotencyTTL)
		if err != nil || hit {
			replayID = id
			return err
		}
		if err := tx.Enqueue(r); err != nil {
			return err
		}
		if err := idempotencyStore(tx, owner, idempotencyKey, kindOrder, fp, r.ID, now); err != nil {
			return err
		}
		ob.order(r)
		return nil
	})
	if err != nil {
		return core.OrderSummary{}, wrapInternal(err, "submit order")
	}
	if replayID != "" {
		return e.Order(ctx, owner, replayID)
	}
	e.signal()
	return e.summaryOf(*r), nil
}

// SubmitBatch validates every scene (each scene's options laid over the batch
// defaults) and queues them all in one transaction, or nothing: one invalid scene
// refuses the batch with an error naming it ("scenes[4].quality").
func (e *Engine) SubmitBatch(ctx context.Context, owner string, b BatchRequest, idempotencyKey string) (core.BatchAggregate, error) {
	if owner == "" {
		return core.BatchAggregate{}, core.Unauthorized("a batch needs an owner key")
	}
	if err := checkIdempotencyKey(idempotencyKey); err != nil {
		return core.BatchAggregate{}, err
	}
	fp, err := fingerprint("batch", b)
	if err != nil {
		return core.BatchAggregate{}, err
	}
	if id, ok, err := e.idempotentHit(ctx, owner, idempotencyKey, kindBatch, fp); err != nil || ok {
		if err != nil {
			return core.BatchAggregate{}, err
		}
		return e.Batch(ctx, owner, id)
	}

	name := strings.TrimSpace(b.Name)
	if !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxBatchNameLen {
		return core.BatchAggregate{}, core.Invalid("name", "must be valid text of at most %d characters", MaxBatchNameLen)
	}
	if len(b.Scenes) == 0 || len(b.Scenes) > MaxScenes {
		return core.BatchAggregate{}, core.Invalid("scenes", "a batch has 1 to %d scenes, got %d", MaxScenes, len(b.Scenes))
	}
	if c := b.Defaults.StyleClause; c != nil && strings.TrimSpace(*c) != "" {
		return core.BatchAggregate{}, core.Invalid("style_clause",
			"is accepted on single orders only, not in batch defaults; a staging_preset can carry style text")
	}
	if err := catalog.Validate(b.Defaults); err != nil {
		return core.BatchAggregate{}, err
	}

	now := e.now()
	batch := &core.Batch{ID: uuid.NewString(), Owner: owner, Name: name, CreatedAt: now}
	recs := make([]*core.Order, len(b.Scenes))
	for i, sc := range b.Scenes {
		prefix := fmt.Sprintf("scenes[%d]", i)
		if c := sc.Options.StyleClause; c != nil && strings.TrimSpace(*c) != "" {
			return core.BatchAggregate{}, core.WithPrefix(prefix, core.Invalid("style_clause",
				"is accepted on single orders only, not in batch scene overrides"))
		}
		if err := catalog.Validate(sc.Options); err != nil {
			return core.BatchAggregate{}, core.WithPrefix(prefix, err)
		}
		merged := catalog.Merge(b.Defaults, sc.Options)
		ins, res, err := e.validateScene(owner, sc.Inputs, merged, true)
		if err != nil {
			return core.BatchAggregate{}, core.WithPrefix(prefix, err)
		}
		recs[i] = &core.Order{
			ID: uuid.NewString(), Owner: owner, Status: core.OrderPending, Inputs: ins,
			Options: merged, Resolved: res, BatchID: batch.ID, SceneIndex: i,
			Stage: StageQueued, CreatedAt: now, UpdatedAt: now,
		}
		batch.Orders = append(batch.Orders, recs[i].ID)
	}

	var replayID string
	err = e.commit(ctx, func(tx core.OrdersTx, ob *outbox) error {
		id, hit, err := idempotencyLookup(tx, owner, idempotencyKey, kindBatch, fp, now, e.cfg.IdempotencyTTL)
		if err != nil || hit {
			replayID = id
			return err
		}
		if err := tx.PutBatch(batch); err != nil {
			return err
		}
		for _, r := range recs {
			if err := tx.Enqueue(r); err != nil {
				return err
			}
			ob.order(r)
		}
		return idempotencyStore(tx, owner, idempotencyKey, kindBatch, fp, batch.ID, now)
	})
	if err != nil {
		return core.BatchAggregate{}, wrapInternal(err, "submit batch")
	}
	if replayID != "" {
		return e.Batch(ctx, owner, replayID)
	}
	e.signal()
	return e.Batch(ctx, owner, batch.ID)
}

// validateScene checks one order's or scene's inputs and options: 1 to MaxBrackets inputs, each
// a UUID naming a ready upload of owner (outputs, exports and masks refused); options
// resolved by the catalog; the magic eraser's mask an owned ready mask. It returns
// the inputs normalised to lower case and the resolved options.
func (e *Engine) validateScene(owner string, inputs []string, opts core.Options, inBatch bool) ([]string, core.Resolved, error) {
	if len(inputs) < 1 || len(inputs) > MaxBrackets {
		return nil, core.Resolved{}, core.Invalid("inputs",
			"needs 1 to %d asset ids (the brackets of one scene), got %d", MaxBrackets, len(inputs))
	}
	ins := make([]string, len(inputs))
	for i, id := range inputs {
		field := fmt.Sprintf("inputs[%d]", i)
		if err := uuid.Validate(id); err != nil || len(id) != 36 {
			return nil, core.Resolved{}, core.Invalid(field, "must be an asset id (a UUID), got %q", clip(id))
		}
		ins[i] = strings.ToLower(id)
		for j := 0; j < i; j++ {
			if ins[j] == ins[i] {
				return nil, core.Resolved{}, core.Invalid(field, "repeats inputs[%d]; each bracket is a different asset", j)
			}
		}
	}
	res, err := ResolveBrackets(opts, inBatch, len(ins))
	if err != nil {
		return nil, core.Resolved{}, err
	}
	for i, id := range ins {
		if err := e.checkInput(owner, fmt.Sprintf("inputs[%d]", i), id); err != nil {
			return nil, core.Resolved{}, err
		}
	}
	if res.GenEdit == catalog.GenMagicEraser {
		if err := e.checkMask(owner, res.Mask); err != nil {
			return nil, core.Resolved{}, err
		}
	}
	return ins, res, nil
}

func (e *Engine) checkInput(owner, field, id string) error {
	a, err := e.assets.Get(owner, id)
	if err != nil {
		if core.KindOf(err) == core.KindNotFound {
			return core.Invalid(field, "asset %s not found", id)
		}
		return fmt.Errorf("look up %s: %w", field, err)
	}
	switch a.Kind {
	case core.AssetOutput:
		return core.Invalid(field, "asset %s is an order output; to edit a result again, download it and upload it as a new asset", id)
	case core.AssetExport:
		return core.Invalid(field, "asset %s is an export; to edit it, download it and upload it as a new asset", id)
	case core.AssetMask:
		return core.Invalid(field, "asset %s is a mask; a mask goes in the mask field of a magic eraser order", id)
	}
	if a.Status != core.AssetReady {
		return core.Invalid(field, "asset %s is %s, not ready; wait until its status is ready", id, a.Status)
	}
	return nil
}

// checkMask accepts an owned ready asset that ingest recognised as a mask, or an
// uploaded image that decodes as one (a white-on-black grayscale PNG).
func (e *Engine) checkMask(owner, id string) error {
	a, err := e.assets.Get(owner, id)
	if err != nil {
		if core.KindOf(err) == core.KindNotFound {
			return core.Invalid("mask", "asset %s not found", id)
		}
		return fmt.Errorf("look up mask: %w", err)
	}
	if a.Status != core.AssetReady {
		return core.Invalid("mask", "asset %s is %s, not ready; wait until its status is ready", id, a.Status)
	}
	switch a.Kind {
	case core.AssetMask:
		return nil
	case core.AssetUpload:
		if err := pipeline.CheckMask(e.pipelineAssets(), id); err != nil {
			return core.Invalid("mask", "asset %s is not a usable mask (a white-on-transparent PNG): %v", id, err)
		}
		return nil
	}
	return core.Invalid("mask", "asset %s is an %s, not a mask", id, a.Kind)
}

// clip shortens a value quoted in an error so a long body does not echo back whole.
func clip(s string) string {
	const max = 64
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "..."
}

// wrapInternal adds context to an error that is not one of core's typed errors, which
// pass through unchanged so the front doors can map them.
func wrapInternal(err error, what string) error {
	if core.KindOf(err) != core.KindInternal {
		return err
	}
	return fmt.Errorf("engine: %s: %w", what, err)
}
