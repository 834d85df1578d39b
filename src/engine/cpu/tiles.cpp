#include "src/engine/cpu/tiles.hpp"

#include "src/hardware/isa_target.hpp"

namespace roofline::engine::fast {

const TileSet& tiles(hw::Isa isa) { return hw::for_isa(isa, &tiles_avx512, &tiles_avx2, &tiles_sse2); }

const TileSet& tiles() {
  static const TileSet& set = tiles(hw::active_isa());
  return set;
}

}  // namespace roofline::engine::fast
