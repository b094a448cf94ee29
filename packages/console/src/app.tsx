import { useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useState } from 'react';
import { Navigate, NavLink, Route, Routes } from 'react-router';
import { namespace as savedNamespace, setNamespace } from './api/session.js';
import { AuthPrompt } from './components/auth-prompt.js';
import { NamespacePicker } from './components/namespace-picker.js';
import { ThemeToggle } from './components/theme-toggle.js';
import { NamespaceContext } from './lib/namespace-context.js';
import { applyTheme, effectiveTheme, savedTheme, type ThemeChoice } from './lib/theme.js';
import { ThemeContext } from './lib/theme-context.js';
import { DefinitionsPage } from './views/definitions-page.js';
import { InboxPage } from './views/inbox-page.js';
import { LimitsPage } from './views/limits-page.js';
import { OutboxPage } from './views/outbox-page.js';
import { RunPage } from './views/run-page.js';
import { RunsPage } from './views/runs-page.js';
import { SchedulesPage } from './views/schedules-page.js';
import { WorkersPage } from './views/workers-page.js';

// The editor, the diff and the form library load with the pages that use them, not with the console.
const DefinitionPage = lazy(() =>
  import('./views/definition-page.js').then((m) => ({ default: m.DefinitionPage })),
);
const DeployPage = lazy(() => import('./views/deploy-page.js').then((m) => ({ default: m.DeployPage })));
const HumanTaskPage = lazy(() =>
  import('./views/human-task-page.js').then((m) => ({ default: m.HumanTaskPage })),
);

const SECTIONS = [
  ['/runs', 'Runs'],
  ['/definitions', 'Definitions'],
  ['/inbox', 'Inbox'],
  ['/outbox', 'Outbox'],
  ['/schedules', 'Schedules'],
  ['/limits', 'Limits'],
  ['/workers', 'Workers'],
] as const;

/** The console: a header with the sections, the namespace and the theme, and the page below it. */
export function App() {
  const queries = useQueryClient();
  const [ns, setNs] = useState(savedNamespace());
  const [theme, setTheme] = useState<ThemeChoice>(savedTheme());
  const [shown, setShown] = useState(effectiveTheme(theme));
  useEffect(() => {
    applyTheme(theme);
    setShown(effectiveTheme(theme));
    const media = window.matchMedia('(prefers-color-scheme: dark)');
    const follow = () => setShown(effectiveTheme(theme));
    media.addEventListener('change', follow);
    return () => media.removeEventListener('change', follow);
  }, [theme]);
  const changeNamespace = (value: string) => {
    setNamespace(value);
    setNs(value);
    void queries.invalidateQueries();
  };
  return (
    <ThemeContext.Provider value={shown}>
      <NamespaceContext.Provider value={ns}>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <header className="top">
          <span className="brand">Weft</span>
          <nav aria-label="Sections">
            <ul>
              {SECTIONS.map(([to, label]) => (
                <li key={to}>
                  <NavLink to={to}>{label}</NavLink>
                </li>
              ))}
            </ul>
          </nav>
          <div className="top-tools">
            <NamespacePicker value={ns} onChange={changeNamespace} />
            <ThemeToggle choice={theme} shown={shown} onChange={setTheme} />
            <AuthPrompt />
          </div>
        </header>
        <main id="main" tabIndex={-1}>
          <Suspense fallback={<p aria-busy="true">Loading…</p>}>
            <Routes>
              <Route path="/" element={<Navigate to="/runs" replace />} />
              <Route path="/runs" element={<RunsPage />} />
              <Route path="/runs/:id" element={<RunPage />} />
              <Route path="/definitions" element={<DefinitionsPage />} />
              <Route path="/definitions/:name" element={<DefinitionPage />} />
              <Route path="/deploy" element={<DeployPage />} />
              <Route path="/inbox" element={<InboxPage />} />
              <Route path="/inbox/:id" element={<HumanTaskPage />} />
              <Route path="/outbox" element={<OutboxPage />} />
              <Route path="/schedules" element={<SchedulesPage />} />
              <Route path="/limits" element={<LimitsPage />} />
              <Route path="/workers" element={<WorkersPage />} />
              <Route path="*" element={<NotFound />} />
            </Routes>
          </Suspense>
        </main>
      </NamespaceContext.Provider>
    </ThemeContext.Provider>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        This address is not a page of the console. Go to the <NavLink to="/runs">runs</NavLink>.
      </p>
    </section>
  );
}
