// The store-side half of a Reservation (declared in store.h): who owns it and whether
// it has been committed or aborted. Each Store implementation derives its own state
// from it. Only server/store/ code includes this.
#pragma once

#include "server/store/store.h"

namespace rpmp {

struct Reservation::Impl {
  virtual ~Impl() = default;
  Store* owner = nullptr;  // the store that handed it out
  bool finished = false;   // committed or aborted
};

}  // namespace rpmp
