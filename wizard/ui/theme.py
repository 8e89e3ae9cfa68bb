"""Styles of the wizard UI (passed to Blocks.launch(css=...) in Gradio 6)."""

CSS = """
.sw-summary {border-radius: 10px; padding: 10px 12px; margin-bottom: 6px; border: 1px solid var(--border-color-primary);}
.sw-summary.sw-v-error {background: #fdecec; border-color: #f3b4b4;}
.sw-summary.sw-v-warning {background: #fff6e5; border-color: #f5d49a;}
.sw-summary.sw-v-ok {background: #eaf7ee; border-color: #a8dcb7;}
.dark .sw-summary.sw-v-error {background: #3b1f1f;} .dark .sw-summary.sw-v-warning {background: #3b321f;} .dark .sw-summary.sw-v-ok {background: #1f3b27;}
.sw-verdict {font-weight: 700; font-size: 1.05em; margin-bottom: 4px;}
.sw-small {font-size: .82em; opacity: .75; margin-top: 4px;}
.sw-note {font-size: .82em; margin-top: 4px; opacity: .85;}
.sw-pill {display: inline-block; border-radius: 999px; padding: 1px 9px; font-size: .8em; font-weight: 600; margin-right: 4px; background: #e5e7eb; color: #111;}
.sw-pill.sw-error {background: #dc2626; color: #fff;} .sw-pill.sw-warning {background: #d97706; color: #fff;}
.sw-pill.sw-info {background: #2563eb; color: #fff;} .sw-pill.sw-ok {background: #16a34a; color: #fff;}
.sw-group {font-weight: 700; margin: 6px 0 2px; font-size: .9em; text-transform: uppercase; letter-spacing: .04em;}
.sw-g-error {color: #b91c1c;} .sw-g-warning {color: #b45309;} .sw-g-info {color: #1d4ed8;}
.sw-card {border-left: 4px solid #9ca3af; padding: 6px 10px; border-radius: 6px; background: var(--block-background-fill);}
.sw-card.sw-error {border-left-color: #dc2626;} .sw-card.sw-warning {border-left-color: #d97706;} .sw-card.sw-info {border-left-color: #2563eb;}
.sw-head {font-size: .93em;} .sw-msg {font-size: .88em; margin-top: 3px; line-height: 1.35;}
.sw-fields {font-size: .8em; margin-top: 3px; opacity: .8;}
.sw-badge {font-size: .7em; font-weight: 700; padding: 1px 6px; border-radius: 4px; color: #fff; background: #6b7280;}
.sw-badge.sw-error {background: #dc2626;} .sw-badge.sw-warning {background: #d97706;} .sw-badge.sw-info {background: #2563eb;}
.sw-slot {gap: 4px !important; margin-bottom: 6px;}
.sw-slot button {font-size: .8em !important; padding: 3px 8px !important; min-height: 0 !important;}
.sw-overflow ul {margin: 2px 0 0 16px; font-size: .85em;}
.sw-xc {border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 8px 10px; min-height: 80px;}
.sw-xc.sw-v-error {border-color: #f3b4b4;} .sw-xc.sw-v-ok {border-color: #a8dcb7;}
.sw-xc-off, .sw-xc-stale {opacity: .75;}
.sw-pre {white-space: pre-wrap; font-size: .8em; max-height: 260px; overflow: auto;}
.sw-status {padding: 8px 10px; border-radius: 8px; border: 1px solid var(--border-color-primary);}
.sw-st-healthy {background: #eaf7ee;} .sw-st-failed, .sw-st-exited {background: #fdecec;} .sw-st-starting {background: #fff6e5;}
#sw-sidebar {position: sticky; top: 8px; align-self: flex-start;}
#sw-title h1 {margin-bottom: 0;}
.sw-mono textarea {font-family: var(--font-mono), ui-monospace, monospace !important; font-size: .85em !important;}
#sw-hw-facts th, #sw-hw-facts td {word-break: normal !important; overflow-wrap: normal !important; hyphens: none;}
#sw-hw-facts th, #sw-hw-facts td:first-child {white-space: nowrap;}
#sw-hw-facts td:last-child {overflow-wrap: anywhere !important;}
.sw-flash {outline: 3px solid #f59e0b !important; border-radius: 6px; transition: outline .3s;}
"""

#: focus a field after "Go to field" (value: 'elem-id#nonce')
FOCUS_JS = """
(target) => {
  if (!target) return;
  const id = target.split('#')[0];
  setTimeout(() => {
    const el = document.getElementById(id);
    if (!el) return;
    el.scrollIntoView({behavior: 'smooth', block: 'center'});
    el.classList.add('sw-flash');
    setTimeout(() => el.classList.remove('sw-flash'), 1500);
    const inp = el.querySelector('input, textarea, [contenteditable=true]');
    if (inp) inp.focus();
  }, 150);
}
"""
