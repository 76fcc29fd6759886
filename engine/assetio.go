package engine

import (
	"io"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/pipeline"
)

// pipelineAssets adapts the asset store to what the pipeline reads and writes.
type pipelineAssets struct{ s AssetStore }

func (e *Engine) pipelineAssets() pipeline.Assets { return pipelineAssets{e.assets} }

type blob struct {
	assets.File
	size int64
}

func (b blob) Size() int64 { return b.size }

func (p pipelineAssets) OpenAsset(id string) (pipeline.Blob, error) {
	f, a, err := p.s.Open(id)
	if err != nil {
		return nil, err
	}
	size := a.Size
	if size <= 0 {
		if n, err := f.Seek(0, io.SeekEnd); err == nil {
			size = n
		}
	}
	return blob{File: f, size: size}, nil
}

func (p pipelineAssets) CreateOutput(owner, orderID, format string, write func(io.Writer) error) (core.Asset, error) {
	return p.s.CreateOutput(owner, orderID, format, write)
}
