package ui

import (
	"context"
	"io"

	"github.com/porchlight/porchlight/app/hotfolder"
	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/events"
)

// Engine is what the window needs of the order engine; *engine.Engine implements it.
type Engine interface {
	Submit(ctx context.Context, owner string, inputs []string, opts core.Options, idempotencyKey string) (core.OrderSummary, error)
	SubmitBatch(ctx context.Context, owner string, b engine.BatchRequest, idempotencyKey string) (core.BatchAggregate, error)
	Order(ctx context.Context, owner, id string) (core.OrderSummary, error)
	OrderRecord(ctx context.Context, owner, id string) (core.Order, error)
	Cancel(ctx context.Context, owner, id string) (core.OrderSummary, error)
	Batch(ctx context.Context, owner, id string) (core.BatchAggregate, error)
	CancelBatch(ctx context.Context, owner, id string) (core.BatchAggregate, error)
	// Orders lists owner's orders, newest first (the hot folders' work).
	Orders(ctx context.Context, owner string, limit int) ([]core.OrderSummary, error)
	Events() *events.Bus
}

// Shoots is what the window needs of the shoot store; *store.Shoots of engine/store
// implements it (core.ShootStore).
type Shoots interface {
	Put(ctx context.Context, s core.Shoot) error
	Get(ctx context.Context, id string) (core.Shoot, error)
	List(ctx context.Context, owner string) ([]core.Shoot, error)
	Delete(ctx context.Context, id string) error
}

// Assets is what the window needs of the asset store; *assets.Service implements it.
type Assets interface {
	Add(owner, filename, contentType string, body io.Reader) (core.Asset, error)
	Get(owner, id string) (core.Asset, error)
	Open(id string) (assets.File, core.Asset, error)
	Thumbnail(owner, id string) (assets.File, error)
}

// Keys is what the window needs of the key service; *keys.Service implements it.
type Keys interface {
	List() ([]core.Key, error)
	Create(name string, scope core.Scope) (core.Key, string, error)
	Rotate(id string) (core.Key, string, error)
	Revoke(id string) error
	InternalOwner(role string) (string, error)
}

// HotFolders is what the window needs of the hot-folder service;
// *hotfolder.Service implements it.
type HotFolders interface {
	Status() []hotfolder.FolderStatus
	Pause(name string) error
	Resume(name string) error
	// Apply runs the folders cfgs from now on (added ones start, edited ones
	// restart); hotfolder.ErrBusy names folders left as they were for now.
	Apply(cfgs []hotfolder.Config) error
}

// Deps are the services the window shows and drives.
type Deps struct {
	Engine Engine
	Assets Assets
	Keys   Keys
	// Hot runs the hot folders; nil leaves the tab to the configuration only
	// (changes apply at the next start).
	Hot HotFolders
	// Shoots keeps the window's shoots across restarts; nil keeps them in memory
	// for this run only.
	Shoots Shoots
	// Available says whether a feature of the catalog can run now (a model backend is
	// configured for it); nil treats every feature as available.
	Available func(featureKey string) bool
	// Config holds the settings and writes them to the config file.
	Config *Config
	// DataDir and APIAddr ("" when the API is off) are shown in the settings.
	DataDir string
	APIAddr string
	// PreviewDir holds the orders' preview bases (pipeline.Config.PreviewDir) that
	// the sliders render over; "" previews over the delivered photo.
	PreviewDir string
}

var (
	_ Engine     = (*engine.Engine)(nil)
	_ Assets     = (*assets.Service)(nil)
	_ HotFolders = (*hotfolder.Service)(nil)
	_ Shoots     = core.ShootStore(nil)
)
