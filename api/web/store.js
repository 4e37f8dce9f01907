// A small store per screen: the state of one screen, replaced by set(), drawn by its subscribers. Screens render
// from their store instead of reading their own inputs back.

export function createStore(initial) {
  let current = initial;
  const subscribers = new Set();
  return {
    get: () => current,
    set(patch) {
      current = { ...current, ...patch };
      for (const draw of subscribers) draw(current);
    },
    subscribe(draw) {
      subscribers.add(draw);
      draw(current);
      return () => subscribers.delete(draw);
    },
  };
}
