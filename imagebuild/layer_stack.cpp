#include "imagebuild/layer_stack.h"

#include "imagebuild/pip_step_cache.h"

namespace trainpack::imagebuild {

void LayerStack::append(std::string instruction, std::optional<layers::LayerBlob> blob, layers::FileEntries entries,
                        Maker maker) {
  index_.apply(entries);
  layers_.push_back({std::move(instruction), std::move(blob), maker, std::move(entries), nullptr});
}

void LayerStack::append(std::string instruction, layers::LayerBlob blob, std::shared_ptr<DeferredListing> listing) {
  index_.apply_deferred(listing->for_index(listing));
  layers_.push_back({std::move(instruction), std::move(blob), Maker::kPip, {}, std::move(listing)});
}

std::vector<image::AppendStep> LayerStack::history() const {
  std::vector<image::AppendStep> steps;
  for (const Layer& l : layers_) steps.push_back({l.instruction, l.blob});
  return steps;
}

std::vector<layers::LayerBlob> LayerStack::blobs() const {
  std::vector<layers::LayerBlob> out;
  for (const Layer& l : layers_)
    if (l.blob) out.push_back(*l.blob);
  return out;
}

std::vector<const layers::FileEntries*> LayerStack::entries(std::size_t from, std::size_t to) {
  std::vector<const layers::FileEntries*> out;
  for (std::size_t i = from; i < to && i < layers_.size(); ++i) {
    Layer& l = layers_[i];
    if (l.deferred) {
      l.entries = l.deferred->entries();
      l.deferred.reset();
    }
    out.push_back(&l.entries);
  }
  return out;
}

std::vector<const LayerStack::Layer*> LayerStack::copied() const {
  std::vector<const Layer*> out;
  for (const Layer& l : layers_)
    if (l.maker == Maker::kCopy) out.push_back(&l);
  return out;
}

std::size_t LayerStack::through_last_pip_step() const {
  for (std::size_t i = layers_.size(); i > 0; --i)
    if (layers_[i - 1].maker == Maker::kPip) return i;
  return 0;
}

}  // namespace trainpack::imagebuild
