package core

import "time"

// OrderStatus is the state of an order (and of a batch scene).
type OrderStatus string

const (
	OrderPending   OrderStatus = "pending"
	OrderRunning   OrderStatus = "running"
	OrderCompleted OrderStatus = "completed"
	OrderFailed    OrderStatus = "failed"
	OrderCancelled OrderStatus = "cancelled"
	OrderExpired   OrderStatus = "expired"
)

// Terminal reports whether s is a settled state.
func (s OrderStatus) Terminal() bool {
	switch s {
	case OrderCompleted, OrderFailed, OrderCancelled, OrderExpired:
		return true
	}
	return false
}

// Order is the stored record of an order.
type Order struct {
	ID         string            `json:"orderUuid"`
	Owner      string            `json:"owner"`
	Status     OrderStatus       `json:"status"`
	Inputs     []string          `json:"inputs"`
	Options    Options           `json:"options"`  // as given
	Resolved   Resolved          `json:"resolved"` // after defaults and presets
	BatchID    string            `json:"batchId,omitempty"`
	SceneIndex int               `json:"sceneIndex,omitempty"`
	Progress   float64           `json:"progressPercent"`
	Stage      string            `json:"progressStage,omitempty"`
	ETASeconds *int              `json:"etaSeconds,omitempty"`
	OutputID   string            `json:"outputAssetId,omitempty"`
	Error      string            `json:"error,omitempty"`
	ErrorCode  string            `json:"errorCode,omitempty"`
	Recipes    map[string]string `json:"recipes,omitempty"`
	Notes      []string          `json:"notes,omitempty"` // things a step decided not to do, e.g. "perspective: too little vertical structure"
	Attempts   int               `json:"attempts,omitempty"`
	CreatedAt  time.Time         `json:"createdAt"`
	UpdatedAt  time.Time         `json:"updatedAt"`
}

// OrderSummary is the order as the API, events and the window show it.
type OrderSummary struct {
	OrderUUID       string            `json:"orderUuid"`
	Status          OrderStatus       `json:"status"`
	ProgressPercent float64           `json:"progressPercent"`
	ProgressStage   string            `json:"progressStage"`
	ETASeconds      *int              `json:"etaSeconds,omitempty"`
	OutputAssetID   string            `json:"outputAssetId,omitempty"`
	Error           string            `json:"error,omitempty"`
	ErrorCode       string            `json:"errorCode,omitempty"`
	Inputs          []string          `json:"inputs"`
	BatchID         string            `json:"batchId,omitempty"`
	SceneIndex      *int              `json:"sceneIndex,omitempty"`
	Notes           []string          `json:"notes,omitempty"`
	CreatedAt       time.Time         `json:"createdAt"`
	UpdatedAt       time.Time         `json:"updatedAt"`
	Recipes         map[string]string `json:"recipes"`
}

// Summary returns the public view of o.
func (o *Order) Summary() OrderSummary {
	s := OrderSummary{
		OrderUUID:       o.ID,
		Status:          o.Status,
		ProgressPercent: o.Progress,
		ProgressStage:   o.Stage,
		OutputAssetID:   o.OutputID,
		Error:           o.Error,
		ErrorCode:       o.ErrorCode,
		Inputs:          append([]string(nil), o.Inputs...),
		BatchID:         o.BatchID,
		Notes:           append([]string(nil), o.Notes...),
		CreatedAt:       o.CreatedAt,
		UpdatedAt:       o.UpdatedAt,
		Recipes:         map[string]string{},
	}
	if o.Status == OrderRunning && o.ETASeconds != nil {
		eta := *o.ETASeconds
		s.ETASeconds = &eta
	}
	if o.BatchID != "" {
		i := o.SceneIndex
		s.SceneIndex = &i
	}
	for k, v := range o.Recipes {
		s.Recipes[k] = v
	}
	return s
}

// Batch is the stored record of a batch: its scenes are orders.
type Batch struct {
	ID        string    `json:"batchId"`
	Owner     string    `json:"owner"`
	Name      string    `json:"name"`
	Orders    []string  `json:"orders"` // order ids in scene order
	CreatedAt time.Time `json:"createdAt"`
}

// BatchAggregate is the batch as the API, events and the window show it.
type BatchAggregate struct {
	BatchID   string         `json:"batchId"`
	Name      string         `json:"name"`
	Total     int            `json:"total"`
	Completed int            `json:"completed"`
	Failed    int            `json:"failed"` // failed + cancelled + expired
	Pending   int            `json:"pending"`
	Running   int            `json:"running"`
	Done      bool           `json:"done"`
	CreatedAt time.Time      `json:"createdAt"`
	Orders    []OrderSummary `json:"orders,omitempty"`
}

// Aggregate counts scenes into a batch aggregate.
func Aggregate(b *Batch, scenes []OrderSummary) BatchAggregate {
	a := BatchAggregate{BatchID: b.ID, Name: b.Name, Total: len(scenes), CreatedAt: b.CreatedAt, Orders: scenes}
	for _, s := range scenes {
		switch s.Status {
		case OrderCompleted:
			a.Completed++
		case OrderFailed, OrderCancelled, OrderExpired:
			a.Failed++
		case OrderPending:
			a.Pending++
		case OrderRunning:
			a.Running++
		}
	}
	a.Done = a.Completed+a.Failed == a.Total
	return a
}

// Event types of the bus, SSE and WebSocket.
const (
	EventOrder = "order"
	EventBatch = "batch"
	EventPing  = "ping"
)

// Event is one message of the event bus. Owner is the key uuid it belongs to.
type Event struct {
	ID      uint64 `json:"-"`
	Type    string `json:"type"`
	Owner   string `json:"-"`
	OrderID string `json:"-"`
	BatchID string `json:"-"`
	Data    any    `json:"data"`
}
