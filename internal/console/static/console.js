// The console's only script (its pages allow no inline script): a job page
// follows its job over server-sent events, each event an HTML fragment the
// server rendered with the page's own templates; copy buttons copy a block.
(function () {
  'use strict';

  function fragment(html) {
    const t = document.createElement('template');
    t.innerHTML = html.trim();
    return t.content.firstElementChild;
  }

  function follow(timeline) {
    const es = new EventSource(timeline.dataset.live);
    es.addEventListener('step', function (e) {
      const li = fragment(e.data);
      const old = li && document.getElementById(li.id);
      if (old) { old.replaceWith(li); } else if (li) { timeline.append(li); }
    });
    es.addEventListener('head', function (e) {
      const head = document.getElementById('head');
      const next = fragment(e.data);
      if (head && next) { head.replaceWith(next); }
    });
    es.addEventListener('end', function (e) {
      es.close();
      timeline.removeAttribute('data-live');
      document.getElementById('final').innerHTML = e.data;
      bindCopy(document);
      document.dispatchEvent(new CustomEvent('webpilot:ended'));
    });
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    const ta = document.createElement('textarea');
    ta.value = text;
    document.body.append(ta);
    ta.select();
    document.execCommand('copy');
    ta.remove();
    return Promise.resolve();
  }

  function bindCopy(root) {
    root.querySelectorAll('button[data-copy]').forEach(function (b) {
      if (b.dataset.bound) { return; }
      b.dataset.bound = '1';
      b.addEventListener('click', function () {
        const src = document.getElementById(b.dataset.copy);
        copy(src ? src.textContent : '').then(function () {
          b.textContent = 'Copied';
          setTimeout(function () { b.textContent = 'Copy'; }, 1500);
        });
      });
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    const timeline = document.querySelector('[data-live]');
    if (timeline) { follow(timeline); }
    bindCopy(document);
  });
})();
