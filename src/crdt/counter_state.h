// Internal: CounterState, the state of one Counter at one version: the sum
// of every increment it holds (increments commute: no order, no ids).
//
// Thread safety: none (the Doc's rule applies).
#ifndef WEFT_SRC_CRDT_COUNTER_STATE_H_
#define WEFT_SRC_CRDT_COUNTER_STATE_H_

namespace weft::crdt::detail {

class CounterState {
 public:
  double value() const { return value_; }
  void add(double delta) { value_ += delta; }
  // Sets the value as it stands (a snapshot's state section).
  void install(double value) { value_ = value; }

 private:
  double value_ = 0;
};

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_COUNTER_STATE_H_
