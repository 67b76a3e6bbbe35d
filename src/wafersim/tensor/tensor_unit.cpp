#include "wafersim/tensor/tensor_unit.hpp"

#include <deque>
#include <string>

#include "wafersim/errors.hpp"

namespace wafersim::tensor {

namespace {

VectorEngineConfig engine_config(const TensorUnitConfig& cfg) {
  validate(cfg.array);
  if (cfg.input_queue_rows < 1 || cfg.input_queue_rows > 4096) {
    throw ConfigError("input_queue_rows must be in 1..4096, got " + std::to_string(cfg.input_queue_rows));
  }
  return {cfg.array.lanes, cfg.sram_bytes, cfg.pipeline};
}

// The engine as the array's consumer: a transfer needs a free input-queue row; every
// accepted row lets the engine run its program (re-issued by the control unit) as far as
// the queue allows, and its output rows go to the post-processor.
class EngineSink : public DrainSink {
 public:
  EngineSink(VectorEngine& ve, const std::vector<DecodedBundle>& prog, PostProcessor* ppu, int queue_rows)
      : ve_(ve), prog_(prog), ppu_(ppu), queue_rows_(queue_rows) {}

  int64_t earliest(int64_t n) override {
    return n < queue_rows_ ? 0 : ve_.dequeue_cycle(n - queue_rows_);
  }

  void accept(const DrainedEntry& e, int64_t cycle) override {
    meta_.push_back({e.channel, e.pos0, e.valid});
    ve_.push_row(e.values, cycle);
    for (;;) {
      pc_ = ve_.run(prog_, pc_);
      if (pc_ < prog_.size()) break;  // waiting for the next row
      pc_ = 0;                        // the control unit issues the program again
    }
    while (!ve_.output().empty()) {
      const OutputRow& row = ve_.output().front();
      if (ppu_ != nullptr) {
        const Meta m = meta_.front();
        ppu_->accept(m.channel, m.pos0, m.valid, row.bytes);
      }
      meta_.pop_front();
      ve_.output().pop_front();
    }
  }

 private:
  struct Meta {
    int64_t channel, pos0;
    int valid;
  };
  VectorEngine& ve_;
  const std::vector<DecodedBundle>& prog_;
  PostProcessor* ppu_;
  int queue_rows_;
  size_t pc_ = 0;
  std::deque<Meta> meta_;
};

}  // namespace

void TensorCounters::add(const TensorCounters& o) {
  cycles += o.cycles;
  array_cycles += o.array_cycles;
  macs += o.macs;
  peak_macs += o.peak_macs;
  tiles += o.tiles;
  rows_drained += o.rows_drained;
  bundles += o.bundles;
  ppu_write_cycles += o.ppu_write_cycles;
  stall_array_drain_busy += o.stall_array_drain_busy;
  stall_array_queue_full += o.stall_array_queue_full;
  stall_engine_dequeue += o.stall_engine_dequeue;
  stall_engine_sram_port += o.stall_engine_sram_port;
}

TensorUnit::TensorUnit(const TensorUnitConfig& cfg)
    : cfg_(cfg), array_(cfg.array), engine_(engine_config(cfg)), ppu_(cfg.array.lanes) {}

void TensorUnit::load_vector_program(std::span<const Bundle> bundles) {
  std::vector<DecodedBundle> prog;
  prog.reserve(bundles.size());
  for (size_t i = 0; i < bundles.size(); ++i) {
    prog.push_back(decode(bundles[i], "vector program bundle " + std::to_string(i)));
  }
  program_ = std::move(prog);
}

TensorCounters TensorUnit::run_layer(const MatmulOperands& ops, const PoolConfig& pool,
                                     std::span<uint8_t> dst) {
  int deqs = 0, outs = 0;
  for (const DecodedBundle& b : program_) {
    if (b.is_long) continue;
    deqs += b.load.kind == isa::LoadKind::deq || b.load.kind == isa::LoadKind::deqm;
    outs += b.store.kind == isa::StoreKind::out;
  }
  if (deqs == 0) {
    throw ConfigError("the vector program dequeues no row (no DEQ/DEQM): it would never "
                      "consume the matrix array's output");
  }
  if (outs != deqs) {
    throw ConfigError("the vector program dequeues " + std::to_string(deqs) + " row(s) but sends " +
                      std::to_string(outs) + " OUT.B row(s); a layer needs one output row per "
                      "dequeued row for the post-processor");
  }
  // Entries the array will drain: valid rows x transfers per row, tile by tile.
  int64_t entries = 0;
  for (int64_t p0 = 0; p0 < ops.positions; p0 += array_.cols()) {
    const int vp = static_cast<int>(std::min<int64_t>(array_.cols(), ops.positions - p0));
    for (int64_t o0 = 0; o0 < ops.channels; o0 += array_.rows()) {
      entries += std::min<int64_t>(array_.rows(), ops.channels - o0) * array_.chunks(vp);
    }
  }
  if (ops.positions > 0 && entries % deqs != 0) {
    throw ConfigError("the array drains " + std::to_string(entries) + " rows, not a multiple of the " +
                      std::to_string(deqs) + " rows the vector program dequeues per run");
  }
  ppu_.configure(ops.channels, pool);
  if (static_cast<int64_t>(dst.size()) != ppu_.output_bytes()) {
    throw ConfigError("layer output needs " + std::to_string(ppu_.output_bytes()) +
                      " bytes of memory, got " + std::to_string(dst.size()));
  }
  engine_.reset_timing();
  engine_.output().clear();
  EngineSink sink(engine_, program_, &ppu_, cfg_.input_queue_rows);
  const ArrayPassStats as = run_matmul_pass(array_, ops, sink, cfg_.exec);
  if (engine_.queued_rows() != 0) internal_error("rows left in the engine queue after a layer");

  TensorCounters c;
  const VectorCounters& vc = engine_.counters();
  c.array_cycles = as.cycles;
  c.ppu_write_cycles = ppu_.finish(dst);
  c.cycles = std::max(as.cycles, vc.cycles()) + c.ppu_write_cycles;
  c.macs = as.macs;
  c.peak_macs = c.cycles * array_.rows() * array_.cols();
  c.tiles = as.tiles;
  c.rows_drained = as.entries;
  c.bundles = vc.bundles;
  c.stall_array_drain_busy = as.stall_drain_busy;
  c.stall_array_queue_full = as.stall_consumer;
  c.stall_engine_dequeue = vc.stall_dequeue;
  c.stall_engine_sram_port = vc.stall_sram_port;
  total_.add(c);
  return c;
}

TensorCounters TensorUnit::run_matmul(const MatmulOperands& ops, std::span<uint32_t> dst) {
  if (static_cast<int64_t>(dst.size()) != ops.positions * ops.channels) {
    throw ConfigError("matmul result needs " + std::to_string(ops.positions * ops.channels) +
                      " elements, got " + std::to_string(dst.size()));
  }
  MatrixSink sink(ops.positions, ops.channels);
  const ArrayPassStats as = run_matmul_pass(array_, ops, sink, cfg_.exec);
  std::copy(sink.result().begin(), sink.result().end(), dst.begin());
  TensorCounters c;
  c.cycles = c.array_cycles = as.cycles;
  c.macs = as.macs;
  c.peak_macs = c.cycles * array_.rows() * array_.cols();
  c.tiles = as.tiles;
  c.rows_drained = as.entries;
  c.stall_array_drain_busy = as.stall_drain_busy;
  total_.add(c);
  return c;
}

}  // namespace wafersim::tensor
