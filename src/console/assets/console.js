// Timbre console: the few behaviours htmx does not cover. No inline script is allowed (CSP), so they hang off
// data- attributes here.
(function () {
  'use strict'

  // A failed form moves focus to its error summary, so keyboard and screen-reader users land on what went wrong.
  function focusErrors(root) {
    var summary = root.querySelector('.error-summary')
    if (summary) summary.focus()
  }

  // <form data-confirm="¿Eliminar?">: asks before a destructive post.
  document.addEventListener('submit', function (event) {
    var form = event.target
    var question = form && form.getAttribute && form.getAttribute('data-confirm')
    if (question && !window.confirm(question)) event.preventDefault()
  }, true)

  // <select data-fill> whose options carry data-values='{"receptor.rut":"…"}': picking one fills those inputs of the
  // same form (the cliente and producto pickers). With no script the fields are simply typed by hand.
  document.addEventListener('change', function (event) {
    var select = event.target
    if (!select || !select.hasAttribute || !select.hasAttribute('data-fill')) return
    var option = select.options[select.selectedIndex]
    var raw = option && option.getAttribute('data-values')
    if (!raw) return
    var values = JSON.parse(raw)
    var scope = select.getAttribute('data-fill-prefix') || ''
    Object.keys(values).forEach(function (name) {
      var input = select.form && select.form.elements.namedItem(scope + name)
      if (input && 'value' in input) {
        input.value = values[name] === null ? '' : String(values[name])
        input.dispatchEvent(new Event('input', { bubbles: true }))
      }
    })
  })

  // The issue form (screens/emitir.tsx): parts marked data-tipos="43 46" show only for those types, and inputs marked
  // data-required-tipos are required (with their visible mark) only for those. The server renders both for the type it
  // received; this follows the type as it changes. Numbers are never read here: the totals come from the server, which
  // reads them as the form's POST does (domain/numero-cl.ts), so there is one reading of "12.500".
  function applyTipo(form) {
    var select = form.querySelector('select[name="tipo_dte"]')
    if (!select) return
    var tipo = select.value
    var has = function (el, attr) { return (' ' + el.getAttribute(attr) + ' ').indexOf(' ' + tipo + ' ') >= 0 }
    form.querySelectorAll('[data-tipos]').forEach(function (el) { el.hidden = !has(el, 'data-tipos') })
    // A control in a hidden part is disabled too: the browser neither validates it (a hidden, empty, required select
    // would block "Emitir" with no message) nor sends it. The server drops those parts anyway (emitir-body.ts).
    form.querySelectorAll('[data-tipos] input, [data-tipos] select, [data-tipos] textarea').forEach(function (control) {
      control.disabled = control.closest('[data-tipos][hidden]') !== null
    })
    // A list the type requires (a 43's commissions, a note's references) opens; one opened by hand stays open.
    form.querySelectorAll('details[data-open-tipos]').forEach(function (el) { if (has(el, 'data-open-tipos')) el.open = true })
    form.querySelectorAll('[data-required-tipos]').forEach(function (input) {
      var required = has(input, 'data-required-tipos')
      input.required = required
      if (required) input.setAttribute('aria-required', 'true')
      else input.removeAttribute('aria-required')
      var mark = input.labels && input.labels[0] && input.labels[0].querySelector('.required-mark')
      if (mark) mark.hidden = !required
    })
  }
  document.addEventListener('change', function (event) {
    var select = event.target
    if (select && select.name === 'tipo_dte' && select.form) applyTipo(select.form)
  })

  // What only the no-script page needs (the issue form's "Mostrar los campos de este tipo") steps aside.
  function hideNoScriptParts(root) {
    root.querySelectorAll('[data-sin-js]').forEach(function (el) { el.hidden = true })
  }

  document.addEventListener('DOMContentLoaded', function () {
    hideNoScriptParts(document)
    document.querySelectorAll('form').forEach(applyTipo)
    focusErrors(document)
  })
  document.addEventListener('htmx:afterSwap', function (event) {
    hideNoScriptParts(event.target)
    var form = event.target.closest && event.target.closest('form')
    if (form) applyTipo(form)
    focusErrors(event.target)
  })
})()
